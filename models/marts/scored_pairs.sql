{#-
  Every LSH candidate pair scored with the exact Jaccard of its shingle sets and, as a diagnostic only,
  the MinHash signature overlap.  is_duplicate = jaccard >= threshold; the signature never decides.

  Exact Jaccard (macros/algorithm/exact_jaccard.sql: candidate_anchor_jaccard) runs once per distinct pair of
  shingle-set groups; pairs of identical documents reuse their group's score.
-#}

with

candidates as (

    select * from {{ ref("int_candidate_pairs") }}

),

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

anchor_pairs as (

    select distinct
        least(left_anchor_doc_id, right_anchor_doc_id) as low_doc_id,
        greatest(left_anchor_doc_id, right_anchor_doc_id) as high_doc_id
    from candidates

),

anchor_jaccard as (

    -- the shingle sets are read by the macro (on DuckDB through int_anchor_intersections)
    {{ candidate_anchor_jaccard("anchor_pairs") }}

),

anchor_documents as (

    select low_doc_id as doc_id from anchor_pairs
    union
    select high_doc_id as doc_id from anchor_pairs

),

anchor_signatures as (

    -- only the anchors' signatures (the signatures of all documents would be read twice otherwise)
    select
        fingerprints.doc_id,
        fingerprints.signature
    from fingerprints
    inner join anchor_documents on fingerprints.doc_id = anchor_documents.doc_id

),

anchor_scores as (

    select
        anchor_jaccard.low_doc_id as low_anchor_doc_id,
        anchor_jaccard.high_doc_id as high_anchor_doc_id,
        anchor_jaccard.shared_shingles,
        anchor_jaccard.union_shingles,
        anchor_jaccard.jaccard,
        {{ signature_overlap("l.signature", "r.signature") }} as signature_overlap
    from anchor_jaccard
    inner join anchor_signatures as l on anchor_jaccard.low_doc_id = l.doc_id
    inner join anchor_signatures as r on anchor_jaccard.high_doc_id = r.doc_id

),

scored as (

    select
        candidates.left_doc_id,
        candidates.right_doc_id,
        candidates.shared_bands,
        anchor_scores.jaccard,
        cast(anchor_scores.signature_overlap as double) as signature_overlap,
        anchor_scores.shared_shingles,
        anchor_scores.union_shingles,
        candidates.left_domain,
        candidates.right_domain,
        candidates.is_cross_domain,
        candidates.left_anchor_doc_id,
        candidates.right_anchor_doc_id
    from candidates
    inner join anchor_scores
        on
            least(candidates.left_anchor_doc_id, candidates.right_anchor_doc_id)
            = anchor_scores.low_anchor_doc_id
            and greatest(candidates.left_anchor_doc_id, candidates.right_anchor_doc_id)
            = anchor_scores.high_anchor_doc_id

),

final as (

    select
        scored.left_doc_id,
        scored.right_doc_id,
        scored.shared_bands,
        scored.jaccard,
        scored.signature_overlap,
        scored.jaccard >= settings.threshold as is_duplicate,
        case
            when
                scored.jaccard >= settings.threshold
                and scored.signature_overlap >= settings.signature_overlap_threshold
                then 'jaccard_and_minhash'
            when scored.jaccard >= settings.threshold then 'jaccard_match'
            when scored.signature_overlap >= settings.signature_overlap_threshold then 'minhash_only_rejected'
            else 'below_jaccard_threshold'
        end as reason,
        scored.shared_shingles,
        scored.union_shingles,
        scored.left_domain,
        scored.right_domain,
        scored.is_cross_domain,
        scored.left_anchor_doc_id,
        scored.right_anchor_doc_id
    from scored
    cross join settings

)

select * from final
