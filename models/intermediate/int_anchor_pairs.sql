{#-
  The LSH candidate pairs of group anchors (one anchor per distinct shingle set): anchors that share at
  least one band (band_index and band_key), over all domains, left_anchor_doc_id < right_anchor_doc_id,
  with the number of shared bands and both anchors' states (shingle set key, fingerprint settings).
  int_candidate_pairs expands them back to documents.

  Incremental on DuckDB: the pre-hook deletes the pairs of anchors whose state changed or that left
  (macros/algorithm/incremental_lsh.sql); then only the *fresh* anchors (in a shared bucket and in no
  stored pair: new pages, changed pages, new anchors of existing groups) are joined, against all
  memberships.  A pair of two fresh anchors is counted from its smaller side only.  An anchor in a
  shared bucket always has a pair, so a stored anchor is never joined again.  On a full build every
  anchor is fresh and this is the plain self-join.
-#}

-- the pre-hook reads the current anchors: depends_on: {{ ref("int_shingle_set_groups") }}

with

memberships as {{ not_materialized() }} (

    -- read where used: materialized for its two uses, it was a second copy of every membership (1M
    -- pages: 1.6 GB peak against 0.8 GB; 75M memberships: 27-31 s and 1.7 GB spilled against 7.5-7.9 s)
    select * from {{ ref("int_band_memberships") }}

),

shared_buckets as (

    -- the (band_index, band_key) buckets of two or more anchors, the only ones that give pairs: most
    -- buckets hold one page, so the join below hashes a small share of the memberships
    -- (75M memberships, ten disjoint copies of the 1M benchmark's: self-join 15.3 s, filtered 9.2 s)
    select
        band_index,
        band_key
    from memberships
    group by band_index, band_key
    having count(*) > 1

),

shared_memberships as (

    select memberships.*
    from memberships
    inner join shared_buckets
        on
            memberships.band_index = shared_buckets.band_index
            and memberships.band_key = shared_buckets.band_key

),
{% if is_incremental() %}
    paired as (

        select left_anchor_doc_id as doc_id from {{ this }}
        union
        select right_anchor_doc_id as doc_id from {{ this }}

    ),

    fresh as (

        select shared_memberships.*
        from shared_memberships
        where not exists (
                select 1 from paired
                where paired.doc_id = shared_memberships.doc_id
            )

    ),

    fresh_anchors as (

        select distinct doc_id from fresh

    ),

    matches as (

        -- a fresh anchor with every anchor it shares a bucket with; a pair of two fresh anchors once
        select
            least(f.doc_id, o.doc_id) as left_anchor_doc_id,
            greatest(f.doc_id, o.doc_id) as right_anchor_doc_id,
            case when f.doc_id < o.doc_id then f.shingle_set_key else o.shingle_set_key end as left_shingle_set_key,
            case when f.doc_id < o.doc_id then o.shingle_set_key else f.shingle_set_key end as right_shingle_set_key,
            f.settings_key
        from fresh as f
        inner join shared_memberships as o
            on
                f.band_index = o.band_index
                and f.band_key = o.band_key
                and f.doc_id <> o.doc_id
        left join fresh_anchors on o.doc_id = fresh_anchors.doc_id
        where fresh_anchors.doc_id is null or f.doc_id < o.doc_id

    ),
{% else %}
    matches as (

        select
            l.doc_id as left_anchor_doc_id,
            r.doc_id as right_anchor_doc_id,
            l.shingle_set_key as left_shingle_set_key,
            r.shingle_set_key as right_shingle_set_key,
            l.settings_key
        from shared_memberships as l
        inner join shared_memberships as r
            on
                l.band_index = r.band_index
                and l.band_key = r.band_key
                and l.doc_id < r.doc_id

    ),
{% endif %}
final as (

    select
        left_anchor_doc_id,
        right_anchor_doc_id,
        count(*) as shared_bands,
        left_shingle_set_key,
        right_shingle_set_key,
        settings_key
    from matches
    group by
        left_anchor_doc_id,
        right_anchor_doc_id,
        left_shingle_set_key,
        right_shingle_set_key,
        settings_key

)

select * from final
