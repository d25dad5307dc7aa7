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
    adjacency as ({{ undirected_edges(edges) }}),
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


{#-
  hop_distances(sources, edges): a select of (node_id, hops): the number of accepted edges on the
  shortest path from the nearest source (column node_id of `sources`) to every node reachable from one
  (`edges` has src and dst; either direction is enough).  A breadth-first search: each round adds the
  unvisited neighbours of the previous round's nodes, so each node and edge is handled once.
-#}
{% macro hop_distances(sources, edges) %}
    {{- return(adapter.dispatch("hop_distances", "web_text_dedup")(sources, edges)) -}}
{% endmacro %}

{% macro duckdb__hop_distances(sources, edges) %}
    with recursive
    hop_adjacency as ({{ undirected_edges(edges) }}),
    hops (node_id, hops) using key (node_id) as (
        select node_id, 0 as hops from {{ sources }}
        union
        select
            hop_adjacency.dst as node_id,
            min(hops.hops) + 1 as hops
        from hops
        inner join hop_adjacency on hops.node_id = hop_adjacency.src
        left join recurring.hops as seen on hop_adjacency.dst = seen.node_id
        where seen.node_id is null
        group by hop_adjacency.dst
    )
    select node_id, hops from hops
{% endmacro %}


{#- Both directions of every edge of `edges` (columns src, dst), each once. -#}
{% macro undirected_edges(edges) -%}
    select src, dst from {{ edges }}
    union
    select dst as src, src as dst from {{ edges }}
{%- endmacro %}
