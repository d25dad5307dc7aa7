{#-
  Grain: one row per document.  Why: the connected components of the accepted duplicate edges (min-label
  propagation, macros/algorithm/connected_components.sql) are what `clustering: components` (the spec)
  publishes as clusters and what `clustering: strict` splits (macros/algorithm/strict_clusters.sql), so
  they are computed once here, with each member's place in the representative order (newest crawled_at,
  then more tokens, then smallest doc_id) and its shingle-set group anchor (exact scoring works on
  anchors).
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

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

components as (

    -- sqlfluff cannot parse DuckDB's USING KEY: this one statement is excluded from linting.
    {{ connected_components(component_nodes, component_edges) }}  -- noqa: PRS

),

final as (

    select
        components.node_id as doc_id,
        components.component_id,
        count(*) over (partition by components.component_id) as component_size,
        row_number() over (
            partition by components.component_id
            order by documents.crawled_at desc nulls last, fingerprints.token_count desc, documents.doc_id asc
        ) as component_rank,
        groups.group_anchor_doc_id
    from components
    inner join documents on components.node_id = documents.doc_id
    inner join fingerprints on components.node_id = fingerprints.doc_id
    inner join groups on components.node_id = groups.doc_id

)

select * from final
