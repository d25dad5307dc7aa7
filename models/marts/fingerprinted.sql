{#- The per-document fingerprints as published in fingerprinted.parquet (a view: no second copy). -#}
{{ config(materialized="view") }}

with

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

final as (

    select
        doc_id,
        token_count,
        shingle_count,
        shingle_set_key,
        signature,
        band_keys
    from fingerprints

)

select * from final
