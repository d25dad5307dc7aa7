{#-
  Documents with identical shingle sets (mirrors, byte-identical copies, hot buckets of the same page)
  are grouped so that LSH and exact scoring see each distinct set once.  The group's anchor is its
  smallest doc_id.  Candidate pairs are expanded back to documents in int_candidate_pairs.  The set key and
  the fingerprint settings are an anchor's state: the incremental LSH stages keep what they computed for
  an anchor while its state is unchanged (macros/algorithm/incremental_lsh.sql).
-#}

with

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

grouped as (

    select
        doc_id,
        shingle_set_key,
        shingle_count,
        settings_key,
        min(doc_id) over (partition by shingle_set_key, shingle_count) as group_anchor_doc_id,
        count(*) over (partition by shingle_set_key, shingle_count) as group_size
    from fingerprints

),

final as (

    select
        doc_id,
        group_anchor_doc_id,
        group_size,
        doc_id = group_anchor_doc_id as is_anchor,
        shingle_count,
        shingle_set_key,
        settings_key
    from grouped

)

select * from final
