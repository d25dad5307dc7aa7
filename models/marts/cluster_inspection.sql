{#-
  Review view of every multi-member cluster: one row per member with its representative, the exact
  Jaccard of the member to the representative, the accepted edges that touch it and how many edges away
  from the representative it is, plus the cluster's health: edges, minimum and mean edge Jaccard,
  minimum Jaccard of a member to the representative, the representative's eccentricity (the cluster's
  hop diameter lies between it and twice it) and is_chained: some member is below the threshold to the
  representative, so the cluster holds together only through a chain of edges.  Input columns other than
  body (for example WARC lineage) are carried along.
-#}
{#- Representatives of multi-member clusters and the accepted edges, as relations (Spark iterates per hop). -#}
{%- set hop_sources = "(select doc_id as node_id from " ~ ref("clusters")
    ~ " where is_representative and cluster_size > 1)" -%}
{%- set hop_edges = "(select left_doc_id as src, right_doc_id as dst from " ~ ref("duplicate_pairs") ~ ")" %}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

shingle_sets as (

    select * from {{ ref("int_shingle_sets") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

duplicate_pairs as (

    select * from {{ ref("duplicate_pairs") }}

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

members as (

    -- with their shingle-set group anchors: exact scoring works on anchors (int_shingle_sets)
    select
        clusters.*,
        member_group.group_anchor_doc_id as anchor_doc_id,
        representative_group.group_anchor_doc_id as representative_anchor_doc_id
    from clusters
    inner join groups as member_group on clusters.doc_id = member_group.doc_id
    inner join groups as representative_group on clusters.representative_doc_id = representative_group.doc_id
    where clusters.cluster_size > 1

),

representative_pairs as (

    select distinct
        least(anchor_doc_id, representative_anchor_doc_id) as low_doc_id,
        greatest(anchor_doc_id, representative_anchor_doc_id) as high_doc_id
    from members
    where not is_representative

),

scored_anchor_pairs as (

    -- most members are a candidate pair with their representative already: reuse that exact score
    select distinct
        least(left_anchor_doc_id, right_anchor_doc_id) as low_doc_id,
        greatest(left_anchor_doc_id, right_anchor_doc_id) as high_doc_id,
        jaccard
    from scored_pairs

),

unscored_pairs as (

    select representative_pairs.*
    from representative_pairs
    left join scored_anchor_pairs
        on
            representative_pairs.low_doc_id = scored_anchor_pairs.low_doc_id
            and representative_pairs.high_doc_id = scored_anchor_pairs.high_doc_id
    where scored_anchor_pairs.low_doc_id is null

),

computed_jaccard as (

    {{ exact_jaccard("unscored_pairs", "shingle_sets") }}

),

representative_jaccard as (

    select
        scored_anchor_pairs.low_doc_id,
        scored_anchor_pairs.high_doc_id,
        scored_anchor_pairs.jaccard
    from scored_anchor_pairs
    inner join representative_pairs
        on
            scored_anchor_pairs.low_doc_id = representative_pairs.low_doc_id
            and scored_anchor_pairs.high_doc_id = representative_pairs.high_doc_id

    union all

    select
        low_doc_id,
        high_doc_id,
        jaccard
    from computed_jaccard

),

hops as (

    -- sqlfluff cannot parse DuckDB's USING KEY: this one statement is excluded from linting.
    {{ hop_distances(hop_sources, hop_edges) }}  -- noqa: PRS

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

cluster_edges as (

    select
        clusters.cluster_id,
        count(*) as cluster_edges,
        min(duplicate_pairs.jaccard) as cluster_min_edge_jaccard,
        -- a fixed summation order: the same mean to the last bit on every build
        {{ ordered_avg("duplicate_pairs.jaccard", "duplicate_pairs.left_doc_id, duplicate_pairs.right_doc_id") }}
            as cluster_mean_edge_jaccard
    from duplicate_pairs
    inner join clusters on duplicate_pairs.left_doc_id = clusters.doc_id
    group by clusters.cluster_id

),

member_rows as (

    select
        members.cluster_id,
        members.cluster_size,
        members.doc_id,
        members.is_representative,
        members.representative_doc_id,
        case
            when members.is_representative then 1.0 else representative_jaccard.jaccard
        end as jaccard_to_representative,
        coalesce(edge_stats.accepted_edges, 0) as accepted_edges,
        edge_stats.min_edge_jaccard,
        edge_stats.max_edge_jaccard,
        hops.hops as hops_from_representative,
        fingerprints.token_count,
        {{ star_except("documents", ref("stg_documents"), ["doc_id", "body", "body_hash"]) }}  -- noqa: RF02
    from members
    inner join documents on members.doc_id = documents.doc_id
    inner join fingerprints on members.doc_id = fingerprints.doc_id
    left join representative_jaccard
        on
            least(members.anchor_doc_id, members.representative_anchor_doc_id) = representative_jaccard.low_doc_id
            and greatest(members.anchor_doc_id, members.representative_anchor_doc_id)
            = representative_jaccard.high_doc_id
    left join edge_stats on members.doc_id = edge_stats.doc_id
    left join hops on members.doc_id = hops.node_id

),

final as (

    select
        member_rows.*,
        cluster_edges.cluster_edges,
        cluster_edges.cluster_min_edge_jaccard,
        cluster_edges.cluster_mean_edge_jaccard,
        min(member_rows.jaccard_to_representative) over (partition by member_rows.cluster_id)
            as cluster_min_jaccard_to_representative,
        max(member_rows.hops_from_representative) over (partition by member_rows.cluster_id)
            as representative_eccentricity,
        min(member_rows.jaccard_to_representative) over (partition by member_rows.cluster_id)
        < settings.threshold as is_chained
    from member_rows
    inner join cluster_edges on member_rows.cluster_id = cluster_edges.cluster_id
    cross join settings

)

select * from final
