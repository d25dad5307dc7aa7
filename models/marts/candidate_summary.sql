{#-
  How much work LSH saved and what it found: one row with the pair baseline, the candidate count and
  reduction, the accepted edges and the cluster counts.
-#}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

document_counts as (

    select
        count(*) as documents,
        cast(count(*) * (count(*) - 1) / 2 as bigint) as possible_pairs
    from documents

),

group_counts as (

    select
        count(*) filter (where is_anchor) as distinct_shingle_sets,
        count(*) filter (where not is_anchor) as collapsed_identical_documents
    from groups

),

pair_counts as (

    select
        count(*) as candidate_pairs,
        count(*) filter (where is_cross_domain) as cross_domain_candidates,
        count(*) filter (where is_duplicate) as accepted_edges,
        count(*) filter (where is_duplicate and jaccard = 1.0) as exact_duplicate_edges,
        count(*) filter (where is_duplicate and jaccard < 1.0) as near_duplicate_edges,
        count(*) filter (where not is_duplicate) as rejected_candidates
    from scored_pairs

),

cluster_counts as (

    select
        count(distinct cluster_id) filter (where cluster_size > 1) as duplicate_clusters,
        count(*) filter (where cluster_size = 1) as singleton_clusters,
        count(*) filter (where is_representative) as representatives,
        count(*) filter (where not is_representative) as removed_documents
    from clusters

),

final as (

    select
        document_counts.documents,
        document_counts.possible_pairs,
        pair_counts.candidate_pairs,
        -- exact integer rounding: the same bits on every engine
        {{ rounded_percent(
            "document_counts.possible_pairs - pair_counts.candidate_pairs", "document_counts.possible_pairs", 2
        ) }} as candidate_reduction_pct,
        pair_counts.cross_domain_candidates,
        pair_counts.accepted_edges,
        pair_counts.exact_duplicate_edges,
        pair_counts.near_duplicate_edges,
        pair_counts.rejected_candidates,
        cluster_counts.duplicate_clusters,
        cluster_counts.singleton_clusters,
        cluster_counts.representatives,
        cluster_counts.removed_documents,
        group_counts.distinct_shingle_sets,
        group_counts.collapsed_identical_documents
    from document_counts
    cross join pair_counts
    cross join cluster_counts
    cross join group_counts

)

select * from final
