{#-
  Missed-pair audit, step 1 (opt-in: --vars '{audit: true}'): every pair of distinct shingle sets with
  exact Jaccard >= threshold, found without LSH, and whether LSH made it a candidate.

  An exact all-pairs similarity join over group anchors (identical sets are one row): an inverted index
  on shingle hashes with prefix filtering (each set keeps its p = |S| - ceil(t |S|) + 1 rarest
  shingles; two sets with J >= t must share one of them) and size filtering (t |A| <= |B| <= |A| / t),
  so common shingles never make it quadratic; the survivors are scored exactly by macros/algorithm/exact_jaccard.
-#}
{{ config(enabled=audit_enabled()) }}

with

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

shingle_sets as {{ materialized_cte() }} (

    -- every group anchor's set, computed once here (macro shingle_sets_source)
    select * from {{ shingle_sets_source("select doc_id from groups where is_anchor") }}

),

candidates as (

    select * from {{ ref("int_candidate_pairs") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

anchor_shingles as (

    select
        doc_id,
        shingle_count,
        {{ explode_list("shingle_set", "shingle") }}
    from shingle_sets
    where shingle_count > 0

),

shingle_frequency as (

    select
        shingle,
        count(*) as document_frequency
    from anchor_shingles
    group by shingle

),

ranked as (

    select
        anchor_shingles.doc_id,
        anchor_shingles.shingle_count,
        anchor_shingles.shingle,
        row_number() over (
            partition by anchor_shingles.doc_id
            order by shingle_frequency.document_frequency, anchor_shingles.shingle
        ) as position
    from anchor_shingles
    inner join shingle_frequency on anchor_shingles.shingle = shingle_frequency.shingle

),

prefixes as (

    select
        ranked.doc_id,
        ranked.shingle_count,
        ranked.shingle
    from ranked
    cross join settings
    where ranked.position <= ranked.shingle_count - ceil(settings.threshold * ranked.shingle_count - 1e-9) + 1

),

prefix_pairs as (

    select distinct
        l.doc_id as low_doc_id,
        r.doc_id as high_doc_id
    from prefixes as l
    inner join prefixes as r on l.shingle = r.shingle and l.doc_id < r.doc_id
    cross join settings
    where
        r.shingle_count >= settings.threshold * l.shingle_count - 1e-9
        and l.shingle_count >= settings.threshold * r.shingle_count - 1e-9

),

scored as (

    {{ exact_jaccard("prefix_pairs", "shingle_sets") }}

),

lsh_anchor_pairs as (

    select distinct
        least(left_anchor_doc_id, right_anchor_doc_id) as low_doc_id,
        greatest(left_anchor_doc_id, right_anchor_doc_id) as high_doc_id
    from candidates

),

final as (

    select
        scored.low_doc_id as left_anchor_doc_id,
        scored.high_doc_id as right_anchor_doc_id,
        scored.jaccard,
        l.group_size as left_group_size,
        r.group_size as right_group_size,
        l.group_size * r.group_size as document_pairs,
        lsh_anchor_pairs.low_doc_id is not null as is_lsh_candidate
    from scored
    cross join settings
    inner join groups as l on scored.low_doc_id = l.doc_id
    inner join groups as r on scored.high_doc_id = r.doc_id
    left join lsh_anchor_pairs
        on scored.low_doc_id = lsh_anchor_pairs.low_doc_id and scored.high_doc_id = lsh_anchor_pairs.high_doc_id
    where scored.jaccard >= settings.threshold

)

select * from final
