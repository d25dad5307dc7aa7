{#-
  Spark only (enabled in _intermediate__models.yml): the documents whose shingle sets exact scoring
  needs, for int_shingle_sets: the group anchor of every candidate pair (each distinct shingle set once),
  or, when the missed-pair audit is on (var audit), every group anchor.  Signatures and band keys do not
  need the sets, so int_fingerprints does not store them: a web page's set is about 5 KB of hashes, and
  most pages are never a candidate.  On DuckDB, int_anchor_intersections shingles the anchors of the
  pairs it counts itself and keeps no set.
-#}
{{ config(materialized="view") }}

with

documents as (

    -- the shingled text: the body, or the body without boilerplate lines (int_shingle_texts)
    select * from {{ ref("int_shingle_texts") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

candidates as (

    select * from {{ ref("int_candidate_pairs") }}

),

needed as (

    select left_anchor_doc_id as doc_id from candidates
    union
    select right_anchor_doc_id as doc_id from candidates
    union
    -- the missed-pair audit scores pairs LSH never proposed: every anchor
    select doc_id from groups
    where is_anchor and {{ audit_enabled() }}

),

final as (

    select
        documents.doc_id,
        documents.body,
        documents.body_hash
    from documents
    inner join needed on documents.doc_id = needed.doc_id

)

select * from final
order by doc_id
