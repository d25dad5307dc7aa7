{#-
  Duplicate clusters: the connected components of the accepted duplicate edges, over every document
  (singletons included), and the representative of each cluster: the most recently crawled document,
  then the one with more tokens, then the smallest doc_id.  The cluster is named after its first crawled
  member (then the smallest doc_id), so its id stays the same when later crawls add members: it changes
  only when clusters merge (the merged cluster keeps the older name) or a member older than all others
  arrives.
-#}
{#- nodes: every document; edges: the accepted pairs.  Relations, not CTEs: Spark iterates one query per round. -#}
{%- set component_nodes = "(select doc_id as node_id from " ~ ref("stg_documents") ~ ")" -%}
{%- set component_edges = "(select left_doc_id as src, right_doc_id as dst from " ~ ref("duplicate_pairs") ~ ")" %}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

fingerprints as (

    select * from {{ ref("int_fingerprints") }}

),

components as (

    -- sqlfluff cannot parse DuckDB's USING KEY: this one statement is excluded from linting.
    {{ connected_components(component_nodes, component_edges) }}  -- noqa: PRS

),

ranked as (

    select
        components.component_id,
        components.node_id as doc_id,
        count(*) over (partition by components.component_id) as cluster_size,
        row_number() over (
            partition by components.component_id
            order by documents.crawled_at desc nulls last, fingerprints.token_count desc, documents.doc_id asc
        ) as representative_rank,
        row_number() over (
            partition by components.component_id
            order by documents.crawled_at asc, documents.doc_id asc
        ) as first_crawled_rank
    from components
    inner join documents on components.node_id = documents.doc_id
    inner join fingerprints on components.node_id = fingerprints.doc_id

),

final as (

    select
        'cluster-' || max(case when first_crawled_rank = 1 then doc_id end)
            over (partition by component_id) as cluster_id,
        doc_id,
        cluster_size,
        representative_rank,
        representative_rank = 1 as is_representative,
        max(case when representative_rank = 1 then doc_id end)
            over (partition by component_id) as representative_doc_id
    from ranked

)

select * from final
