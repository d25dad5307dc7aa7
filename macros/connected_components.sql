{#-
  connected_components(nodes, edges): a select of (node_id, component_id) where component_id is the
  smallest node_id reachable from node_id.  `nodes` has a column node_id; `edges` has columns src and
  dst (either direction is enough).  Every node appears once, isolated nodes as their own component.

  DuckDB: min-label propagation in a recursive CTE with USING KEY.  Each round only the nodes whose
  label dropped push it to their neighbours, and the keyed working table keeps one row per node, so the
  cost is about (edges x rounds), rounds being the graph's diameter, instead of the spec's transitive
  closure, which materializes every reachable pair (quadratic in cluster size: a 20,000-document cluster
  did not fit in 18 GB).
-#}
{% macro connected_components(nodes, edges) %}
    {{- return(adapter.dispatch("connected_components", "web_text_dedup")(nodes, edges)) -}}
{% endmacro %}

{% macro duckdb__connected_components(nodes, edges) %}
    with recursive
    adjacency as (
        select src, dst from {{ edges }}
        union
        select dst as src, src as dst from {{ edges }}
    ),
    labels (node_id, component_id) using key (node_id) as (
        select node_id, node_id as component_id from {{ nodes }}
        union
        select
            adjacency.dst as node_id,
            min(labels.component_id) as component_id
        from labels
        inner join adjacency on labels.node_id = adjacency.src
        inner join recurring.labels as current_label on adjacency.dst = current_label.node_id
        group by adjacency.dst
        having min(labels.component_id) < min(current_label.component_id)
    )
    select node_id, component_id from labels
{% endmacro %}
