{#-
  Grain: one row per document.  Why: the connected components of the accepted duplicate edges (min-label
  propagation, macros/algorithm/connected_components.sql) are what `clustering: components` (the spec)
  publishes as clusters and what `clustering: strict` splits (macros/algorithm/strict_clusters.sql), so
  they are computed once here, with each member's place in the representative order (newest crawled_at,
  then more tokens, then smallest doc_id) and its shingle-set group anchor (exact scoring works on
  anchors).

  Incremental on DuckDB: node_state hashes everything a document's component and place depend on (its
  crawled_at, token count, shingle set, group anchor, and its edges: how many and a digest of the
  neighbours).  A build recomputes only the stored components that hold a document whose state differs
  (new, changed, gone, or an edge gained or lost: an edge changes the state of both its ends) plus the
  new documents; every other component keeps its rows.  No edge leaves that set (an unchanged edge joins
  two members of one stored component), so the result equals a full build's.
-#}
{%- set incremental = is_incremental() and not stored_columns_missing(["node_state"]) -%}
{#- the nodes carry what final needs (connected_components passes them through): no second join of every
    document to its component -#}
{%- set node_columns = "doc_id as node_id, crawled_at, token_count, group_anchor_doc_id, node_state" -%}
{%- if incremental -%}
    {%- set component_nodes = "(select " ~ node_columns ~ " from recomputed)" -%}
    {%- set component_edges = "(select src, dst from edges semi join recomputed on edges.src = recomputed.doc_id)" -%}
{%- else -%}
    {%- set component_nodes = "(select " ~ node_columns ~ " from node_states)" -%}
    {#- a relation, not a CTE: Spark iterates one query per round over the edges -#}
    {%- set component_edges = "(select left_doc_id as src, right_doc_id as dst from " ~ ref("duplicate_pairs") ~ ")" -%}
{%- endif %}

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

edges as (

    select
        left_doc_id as src,
        right_doc_id as dst
    from {{ ref("duplicate_pairs") }}

),

edge_digests as (

    select
        src as doc_id,
        count(*) as degree,
        bit_xor({{ text_hash("dst") }}) as neighbours
    from ({{ undirected_edges("edges") }}) as both_ways
    group by src

),

node_states as (  -- noqa: ST03

    -- read by connected_components below (the nodes it passes through)
    select
        documents.doc_id,
        documents.crawled_at,
        fingerprints.token_count,
        groups.group_anchor_doc_id,
        {{ text_hash("documents.crawled_at, fingerprints.token_count, groups.shingle_set_key,"
            ~ " groups.group_anchor_doc_id, coalesce(edge_digests.degree, 0),"
            ~ " coalesce(edge_digests.neighbours, 0)") }} as node_state
    from documents
    inner join fingerprints on documents.doc_id = fingerprints.doc_id
    inner join groups on documents.doc_id = groups.doc_id
    left join edge_digests on documents.doc_id = edge_digests.doc_id

),

{% if incremental -%}
    stored as (

        select
            doc_id,
            component_id,
            node_state
        from {{ this }}

    ),

    changed as (

        -- new, changed or gone documents, with the stored component of those that were there
        select
            coalesce(node_states.doc_id, stored.doc_id) as doc_id,
            stored.component_id
        from node_states
        full outer join stored on node_states.doc_id = stored.doc_id
        where node_states.node_state is distinct from stored.node_state

    ),

    recomputed as (  -- noqa: ST03

        -- read by connected_components below (a statement sqlfluff cannot parse, hence the noqa)
        -- the present members of every stored component that holds a changed document, and the new ones
        select node_states.*
        from node_states
        left join stored on node_states.doc_id = stored.doc_id
        where
            stored.doc_id is null
            or stored.component_id in (
                select changed.component_id from changed
                where changed.component_id is not null
            )

    ),

{% endif -%}
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
            order by components.crawled_at desc nulls last, components.token_count desc, components.node_id asc
        ) as component_rank,
        components.group_anchor_doc_id,
        components.node_state
    from components

)

select * from final
