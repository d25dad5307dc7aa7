{#-
  The global LSH candidate pairs: documents that share at least one band (band_index and band_key),
  over all domains, left_doc_id < right_doc_id, with the number of shared bands.

  The band self-join runs over group anchors (one per distinct shingle set: int_anchor_pairs).  Each
  anchor pair (A, B) is expanded back to documents in star form: every member of A is paired with B, and
  A with every member of B; inside a group, the anchor is paired with each other member (identical sets
  share every band).
  Groups of one document expand to exactly the pairs the plain self-join gives, so the counts equal the
  spec's whenever no two groups of size > 1 meet; a hot bucket of n identical pages yields n - 1 rows
  instead of n * (n - 1) / 2.
  The three parts never give one pair twice, so they are concatenated, not de-duplicated (a hash of
  every pair: 4 s of 16 at 11.4M pairs): a document is in one group, an anchor pair is stored once with
  left < right (its tests), the second part leaves out the right anchor itself (the first part pairs it
  with the left anchor), and the third pairs documents of one group, the others documents of two.
-#}

with

anchor_pairs as (

    select * from {{ ref("int_anchor_pairs") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

documents as (

    select * from {{ ref("stg_documents") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

expanded as (

    -- every member of the left group with the right anchor
    select
        anchor_pairs.shared_bands,
        groups.doc_id as doc_a,
        anchor_pairs.right_anchor_doc_id as doc_b
    from anchor_pairs
    inner join groups on anchor_pairs.left_anchor_doc_id = groups.group_anchor_doc_id

    union all

    -- the left anchor with every other member of the right group
    select
        anchor_pairs.shared_bands,
        anchor_pairs.left_anchor_doc_id as doc_a,
        groups.doc_id as doc_b
    from anchor_pairs
    inner join groups on anchor_pairs.right_anchor_doc_id = groups.group_anchor_doc_id
    where not groups.is_anchor

    union all

    -- inside a group of identical shingle sets: the anchor with each other member
    select
        settings.bands as shared_bands,
        groups.group_anchor_doc_id as doc_a,
        groups.doc_id as doc_b
    from groups
    cross join settings
    where not groups.is_anchor

),

pairs as (

    select
        least(doc_a, doc_b) as left_doc_id,
        greatest(doc_a, doc_b) as right_doc_id,
        shared_bands
    from expanded

),

final as (

    select
        pairs.left_doc_id,
        pairs.right_doc_id,
        pairs.shared_bands,
        l.domain as left_domain,
        r.domain as right_domain,
        coalesce(l.domain <> r.domain, true) as is_cross_domain,
        left_group.group_anchor_doc_id as left_anchor_doc_id,
        right_group.group_anchor_doc_id as right_anchor_doc_id
    from pairs
    inner join documents as l on pairs.left_doc_id = l.doc_id
    inner join documents as r on pairs.right_doc_id = r.doc_id
    inner join groups as left_group on pairs.left_doc_id = left_group.doc_id
    inner join groups as right_group on pairs.right_doc_id = right_group.doc_id

)

select * from final
