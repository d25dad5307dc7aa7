{#-
  The per-document fingerprints as published in fingerprinted.parquet (a view: no second copy).  With
  var fingerprint_detail: full it adds each document's normalized text and shingles
  (int_fingerprint_details), the spec's full file.
-#}
{{ config(materialized="view") }}

with

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),
{% if fingerprint_detail_enabled() %}
details as (

    select * from {{ ref("int_fingerprint_details") }}

),
{% endif %}
final as (

    select
        fingerprints.doc_id,
        fingerprints.token_count,
        fingerprints.shingle_count,
        fingerprints.shingle_set_key,
        fingerprints.signature,
        fingerprints.band_keys{% if fingerprint_detail_enabled() %},
        details.normalized_text,
        details.shingles{% endif %}
    from fingerprints
    {%- if fingerprint_detail_enabled() %}
    inner join details on fingerprints.doc_id = details.doc_id
    {%- endif %}

)

select * from final
