{#-
  One row per (anchor document, band): the LSH buckets.  Only group anchors take part
  (see int_shingle_set_groups).
-#}

with

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

anchors as (

    select
        fingerprints.doc_id,
        fingerprints.band_keys
    from fingerprints
    inner join groups on fingerprints.doc_id = groups.doc_id
    where groups.is_anchor

),

memberships as (

    select
        doc_id,
        {{ explode_list_with_position("band_keys", "band_index", "band_key") }}
    from anchors

)

select
    doc_id,
    cast(band_index as integer) as band_index,
    band_key
from memberships
