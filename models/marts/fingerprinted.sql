{#- The per-document fingerprints as published in fingerprinted.parquet (a view: no second copy). -#}
{{ config(materialized="view") }}

with

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

)

select * from fingerprints
