{#-
  One row per (anchor document, band): the LSH buckets.  Only group anchors take part
  (see int_shingle_set_groups).  Incremental on DuckDB: the pre-hook deletes the rows of documents that
  are no longer an anchor in the same state (macros/algorithm/incremental_lsh.sql), and a build appends
  the rows of the anchors it lacks: new and changed pages, and new anchors of existing groups.
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
        groups.doc_id,
        groups.shingle_set_key,
        groups.settings_key,
        fingerprints.band_keys
    from fingerprints
    inner join groups on fingerprints.doc_id = groups.doc_id
    -- in an incremental build, the anchors whose rows are stored (and current: the pre-hook deleted the
    -- others) are skipped
    where
        groups.is_anchor{% if is_incremental() %}
            and not exists (
                select 1 from {{ this }} as stored_rows
                where stored_rows.doc_id = groups.doc_id
            ){% endif %}

),

memberships as (

    select
        doc_id,
        shingle_set_key,
        settings_key,
        {{ explode_list_with_position("band_keys", "band_index", "band_key") }}
    from anchors

)

select
    doc_id,
    cast(band_index as integer) as band_index,
    band_key,
    shingle_set_key,
    settings_key
from memberships
