{#-
  Grain: one row per member of a multi-member cluster.  Why: the review view of every duplicate cluster:
  each member with its representative, its exact Jaccard to it (int_member_jaccards), the accepted edges
  that touch it and how many edges away from the representative it is (int_member_hops), plus the
  cluster's health: edges, minimum and mean edge Jaccard, minimum Jaccard of a member to the
  representative, the representative's eccentricity (the cluster's hop diameter lies between it and twice
  it) and is_chained: some member is below the threshold to the representative, so the cluster holds
  together only through a chain of edges.  Input columns other than body (for example WARC lineage) are
  carried along.
-#}
{%- set not_carried = ["doc_id", "body"] + staging_bookkeeping_columns() %}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

clusters as (

    -- only multi-member clusters are inspected: DuckDB materializes this CTE for its readers, so it holds
    -- those rows only (a third of the pages at 10M, not all of them)
    select * from {{ ref("clusters") }}
    where cluster_size > 1

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

member_jaccards as (

    select * from {{ ref("int_member_jaccards") }}

),

member_hops as (

    select * from {{ ref("int_member_hops") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

duplicate_pairs as (

    -- the accepted edges (duplicate_pairs), with the integer counts behind each Jaccard
    select * from scored_pairs
    where is_duplicate

),

edge_ends as (

    select
        left_doc_id as doc_id,
        jaccard
    from duplicate_pairs
    union all
    select
        right_doc_id as doc_id,
        jaccard
    from duplicate_pairs

),

edge_stats as (

    select
        doc_id,
        count(*) as accepted_edges,
        min(jaccard) as min_edge_jaccard,
        max(jaccard) as max_edge_jaccard
    from edge_ends
    group by doc_id

),

cluster_edge_ratios as (

    -- a cluster's accepted edges grouped by union size: the exact mean below sums one fraction per group
    select
        clusters.cluster_id,
        duplicate_pairs.union_shingles,
        count(*) as edges,
        sum(duplicate_pairs.shared_shingles) as shared_shingles,
        min(duplicate_pairs.jaccard) as min_edge_jaccard
    from duplicate_pairs
    inner join clusters on duplicate_pairs.left_doc_id = clusters.doc_id
    -- under clustering strict an accepted edge may join two clusters: it is not one of either's edges
    inner join clusters as right_clusters
        on duplicate_pairs.right_doc_id = right_clusters.doc_id and clusters.cluster_id = right_clusters.cluster_id
    group by clusters.cluster_id, duplicate_pairs.union_shingles

),

cluster_edges as (

    select
        cluster_id,
        cast(sum(edges) as bigint) as cluster_edges,
        min(min_edge_jaccard) as cluster_min_edge_jaccard,
        -- the exact mean of the edges' shared / union ratios: the same bits on every engine and build
        {{ mean_of_ratios("shared_shingles", "union_shingles", "edges") }} as cluster_mean_edge_jaccard
    from cluster_edge_ratios
    group by cluster_id

),

member_figures as (

    -- each member's own figures, narrow: the cluster-wide ones below group these, not the wide member rows
    select
        clusters.cluster_id,
        clusters.cluster_size,
        clusters.doc_id,
        clusters.is_representative,
        clusters.representative_doc_id,
        case
            when clusters.is_representative then 1.0 else member_jaccards.jaccard_to_representative
        end as jaccard_to_representative,
        member_hops.hops_from_representative
    from clusters
    left join member_jaccards on clusters.doc_id = member_jaccards.doc_id
    left join member_hops on clusters.doc_id = member_hops.doc_id

),

cluster_member_stats as (

    -- a group-by per cluster joined back, rather than window functions over the member rows: those would
    -- hold every carried input column of a cluster in memory (at 10M pages this stage runs beside the
    -- release export)
    select
        cluster_id,
        min(jaccard_to_representative) as cluster_min_jaccard_to_representative,
        max(hops_from_representative) as representative_eccentricity
    from member_figures
    group by cluster_id

),

member_rows as (

    select
        member_figures.cluster_id,
        member_figures.cluster_size,
        member_figures.doc_id,
        member_figures.is_representative,
        member_figures.representative_doc_id,
        member_figures.jaccard_to_representative,
        coalesce(edge_stats.accepted_edges, 0) as accepted_edges,
        edge_stats.min_edge_jaccard,
        edge_stats.max_edge_jaccard,
        member_figures.hops_from_representative,
        fingerprints.token_count,
        {{ star_except("documents", ref("stg_documents"), not_carried) }}  -- noqa: RF02
    from member_figures
    inner join documents on member_figures.doc_id = documents.doc_id
    inner join fingerprints on member_figures.doc_id = fingerprints.doc_id
    left join edge_stats on member_figures.doc_id = edge_stats.doc_id

),

final as (

    select
        member_rows.*,
        cluster_edges.cluster_edges,
        cluster_edges.cluster_min_edge_jaccard,
        cluster_edges.cluster_mean_edge_jaccard,
        cluster_member_stats.cluster_min_jaccard_to_representative,
        cluster_member_stats.representative_eccentricity,
        cluster_member_stats.cluster_min_jaccard_to_representative < settings.threshold as is_chained
    from member_rows
    inner join cluster_edges on member_rows.cluster_id = cluster_edges.cluster_id
    inner join cluster_member_stats on member_rows.cluster_id = cluster_member_stats.cluster_id
    cross join settings

)

select * from final
