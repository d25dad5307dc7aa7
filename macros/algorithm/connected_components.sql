{#-
  connected_components(nodes, edges): a select of every column of `nodes` plus component_id, the
  smallest node_id reachable from node_id.  `nodes` has a column node_id (and no component_id); `edges`
  has columns src and dst (either direction is enough).  Every node appears once, isolated nodes as
  their own component.  The nodes' other columns come along, so that a caller needs no second join of
  every node: at 10M pages int_components' join of the components back to its 10M node rows, in the
  query that also ran the recursion, ran out of the 3000MB limit (docs/benchmarks.md, session 44).

  DuckDB: min-label propagation in a recursive CTE with USING KEY.  Each round only the nodes whose
  label dropped push it to their neighbours, and the keyed working table keeps one row per node, so the
  cost is about (edges x rounds), rounds being the graph's diameter, instead of the spec's transitive
  closure, which materializes every reachable pair (quadratic in cluster size: a 20,000-document cluster
  did not fit in 18 GB).  Only the nodes that have an edge enter the recursion; the others are their own
  component.  At 10M pages (2.6M edges) int_components ran out of memory at the 3000MB limit while
  every page was a label; with the linked pages only it builds in 23 s.

  Before the recursion the edges are contracted once (one round of star contraction): with m(v) the
  smallest of v and its neighbours, the propagation runs over the edges (v, m(v)) and (m(u), m(v)) for
  every edge (u, v), distinct, without loops.  Each such edge joins two nodes of one component (v is m(v)'s
  neighbour; m(u) - u - v - m(v)), and every edge (u, v) is a path u - m(u) - m(v) - v of them, so the
  components and their smallest ids are the same; in a cluster of near-duplicates, where most members
  are neighbours of one smallest member, the 10.8M accepted edges of 1M pages of prose with 85%
  duplicates became few enough that int_components took 6.7 s instead of 40.6 s (docs/benchmarks.md,
  session 41).
-#}
{% macro connected_components(nodes, edges) %}
    {{- return(adapter.dispatch("connected_components", "web_text_dedup")(nodes, edges)) -}}
{% endmacro %}

{% macro duckdb__connected_components(nodes, edges) %}
    with recursive
    given as (select src, dst from {{ edges }} as cc_edges where src <> dst),
    -- only nodes with an edge take part: an isolated node is its own component (most pages of a corpus)
    linked as (
        select src as node_id, least(src, min(dst)) as smallest
        from ({{ undirected_edges("given") }}) as both_ways
        group by src
    ),
    contracted as (
        select node_id as src, smallest as dst from linked where node_id <> smallest
        union
        select l.smallest as src, r.smallest as dst
        from given
        inner join linked as l on given.src = l.node_id
        inner join linked as r on given.dst = r.node_id
        where l.smallest <> r.smallest
    ),
    adjacency as ({{ undirected_edges("contracted") }}),
    labels (node_id, component_id) using key (node_id) as (
        -- the first round's labels: each node's smallest neighbour (or itself)
        select node_id, smallest as component_id from linked
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
    select
        cc_nodes.*,
        coalesce(labels.component_id, cc_nodes.node_id) as component_id
    from {{ nodes }} as cc_nodes
    left join labels on cc_nodes.node_id = labels.node_id
{% endmacro %}

{#-
  Spark has no recursive CTE with a keyed working table (4.1 has WITH RECURSIVE, UNION ALL only and
  capped at 100 levels; 4.0 has none), so the Spark versions below keep their state in Parquet tables
  named after the calling model (<schema>.<model>__cc_*, <schema>.<model>__hops*), rewritten each round
  by run_query until nothing changes; the final ones (int_components__cc_edges: the
  stars, int_member_hops__hops) stay until the next build so the model's query can read them; the other
  scratch tables are dropped.
-#}

{#- Scratch table name for the calling model (schema-qualified). -#}
{% macro _spark_scratch(suffix) %}
    {{- return(this.schema ~ "." ~ this.identifier ~ "__" ~ suffix) -}}
{% endmacro %}


{%- macro _spark_replace_table(name, select_sql) -%}
    {%- do run_query("drop table if exists " ~ name) -%}
    {%- do run_query("create table " ~ name ~ " using parquet as " ~ select_sql) -%}
{%- endmacro -%}


{#-
  Large-star / small-star (Kiveris et al., "Connected Components in MapReduce and Beyond", 2014): the
  edges (a, b), a > b, are rewritten each round by large-star (every neighbour larger than a node is
  linked to the smallest of the node and its neighbours) then small-star (a node and its smaller
  neighbours are linked to the smallest of them).  Both keep every component connected and the rounds
  are O(log^2 n); the loop stops when the edges form stars (no edge's smaller end has a parent, no node
  has two parents), whose centres are the smallest node ids of the components - DuckDB's labels.
  Measured: a 1,200-node path with random ids converges in 8 rounds (min-label propagation with pointer
  jumping took 489).  Isolated nodes never enter the tables (their component is themselves).  Var
  graph_max_rounds (default 1000) stops a runaway loop.
-#}
{% macro spark__connected_components(nodes, edges) %}
    {%- set edge_table = _spark_scratch("cc_edges") -%}
    {%- set large_table = _spark_scratch("cc_large") -%}
    {%- if execute -%}
        {%- set max_rounds = var("graph_max_rounds") | int -%}
        {%- do _spark_replace_table(edge_table,
            "select distinct greatest(src, dst) as a, least(src, dst) as b from " ~ edges ~ " as e"
            ~ " where src <> dst") -%}
        {%- set state = {"rounds": 0, "unsettled": 1} -%}
        {%- for round in range(max_rounds) if state.unsettled > 0 -%}
            {%- do _spark_replace_table(large_table,
                "with nb as (select a as u, b as v from " ~ edge_table ~ " union all select b as u, a as v from "
                ~ edge_table ~ "), m as (select u, least(u, min(v)) as m from nb group by u)"
                ~ " select distinct nb.v as a, m.m as b from nb inner join m on nb.u = m.u where nb.v > nb.u") -%}
            {%- do _spark_replace_table(edge_table,
                "with nb as (select a as u, b as v from " ~ large_table ~ " union all select b as u, a as v from "
                ~ large_table ~ "), lower_nb as (select u, v from nb where v < u),"
                ~ " m as (select u, min(v) as m from lower_nb group by u)"
                ~ " select distinct lower_nb.v as a, m.m as b from lower_nb inner join m on lower_nb.u = m.u"
                ~ " where lower_nb.v <> m.m union select m.u as a, m.m as b from m") -%}
            {%- set unsettled = run_query(
                "select (select count(*) from " ~ edge_table ~ " as c inner join " ~ edge_table
                ~ " as p on c.b = p.a) + (select count(*) from (select a from " ~ edge_table
                ~ " group by a having count(*) > 1) as several)").columns[0].values()[0] -%}
            {%- do state.update({"rounds": round + 1, "unsettled": unsettled}) -%}
        {%- endfor -%}
        {%- do run_query("drop table if exists " ~ large_table) -%}
        {%- if state.unsettled > 0 -%}
            {{ exceptions.raise_compiler_error("connected_components: not converged after "
                ~ max_rounds ~ " rounds (raise var graph_max_rounds)") }}
        {%- endif -%}
        {{ log("connected_components: converged after " ~ state.rounds ~ " round(s)", info=True) }}
    {%- endif %}
    select
        cc_nodes.*,
        coalesce(cc_stars.b, cc_nodes.node_id) as component_id
    from {{ nodes }} as cc_nodes
    left join {{ edge_table }} as cc_stars on cc_nodes.node_id = cc_stars.a
{% endmacro %}


{#-
  hop_paths(sources, edges): a select of (label, node_id, hops, path): for every source (columns label and
  node_id of `sources`; one row per label) and every node reachable from it over `edges` (src and dst;
  either direction is enough), the number of edges on the shortest path and that path as a list of
  node ids from the node to the source (the source's own path is [source]).  A breadth-first search per
  label: each round adds the unvisited neighbours of the previous round's nodes; a node's path goes
  through its neighbour one hop closer with the smallest node id (so the path is a deterministic shortest
  path).  Each label explores only its own connected component.
-#}
{% macro hop_paths(sources, edges) %}
    {{- return(adapter.dispatch("hop_paths", "web_text_dedup")(sources, edges)) -}}
{% endmacro %}

{% macro duckdb__hop_paths(sources, edges) %}
    with recursive
    hop_adjacency as ({{ undirected_edges(edges) }}),
    hops (label, node_id, hops, path) using key (label, node_id) as (
        select label, node_id, 0 as hops, [node_id] as path from {{ sources }}
        union
        select
            hops.label,
            hop_adjacency.dst as node_id,
            min(hops.hops) + 1 as hops,
            list_concat([hop_adjacency.dst], arg_min(hops.path, hops.node_id)) as path
        from hops
        inner join hop_adjacency on hops.node_id = hop_adjacency.src
        left join recurring.hops as seen on hops.label = seen.label and hop_adjacency.dst = seen.node_id
        where seen.node_id is null
        group by hops.label, hop_adjacency.dst
    )
    select label, node_id, hops, path from hops
{% endmacro %}

{#-
  Breadth-first search from every source at once: round k adds, per label, the unvisited neighbours of
  the nodes found in round k - 1 with hops = k, until a round finds none.  One round per hop of the
  largest eccentricity.
-#}
{% macro spark__hop_paths(sources, edges) %}
    {%- set edge_table = _spark_scratch("hops_edges") -%}
    {%- set hop_table = _spark_scratch("hops") -%}
    {%- set frontier_table = _spark_scratch("hops_frontier") -%}
    {%- if execute -%}
        {%- set max_rounds = var("graph_max_rounds") | int -%}
        {%- do _spark_replace_table(edge_table,
            "select distinct src, dst from (select src, dst from " ~ edges ~ " as e1"
            ~ " union all select dst as src, src as dst from " ~ edges ~ " as e2) as both_ways") -%}
        {%- do _spark_replace_table(hop_table,
            "select distinct label, node_id, 0 as hops, array(node_id) as path from " ~ sources ~ " as s") -%}
        {%- set state = {"found": 1} -%}
        {%- for round in range(max_rounds) if state.found > 0 -%}
            {%- do _spark_replace_table(frontier_table,
                "select h.label, e.dst as node_id, " ~ (round + 1) ~ " as hops,"
                ~ " concat(array(e.dst), min_by(h.path, h.node_id)) as path"
                ~ " from " ~ hop_table ~ " as h inner join " ~ edge_table ~ " as e on h.node_id = e.src"
                ~ " left anti join " ~ hop_table ~ " as seen on h.label = seen.label and e.dst = seen.node_id"
                ~ " where h.hops = " ~ round ~ " group by h.label, e.dst") -%}
            {%- set found = run_query("select count(*) from " ~ frontier_table).columns[0].values()[0] -%}
            {%- if found > 0 -%}
                {%- do run_query("insert into " ~ hop_table ~ " select label, node_id, hops, path from "
                    ~ frontier_table) -%}
            {%- endif -%}
            {%- do state.update({"found": found}) -%}
        {%- endfor -%}
        {%- do run_query("drop table if exists " ~ frontier_table) -%}
        {%- do run_query("drop table if exists " ~ edge_table) -%}
        {%- if state.found > 0 -%}
            {{ exceptions.raise_compiler_error("hop_paths: still finding nodes after "
                ~ max_rounds ~ " rounds (raise var graph_max_rounds)") }}
        {%- endif -%}
    {%- endif %}
    select label, node_id, hops, path from {{ hop_table }}
{% endmacro %}


{#-
  Both directions of every edge of `edges` (columns src, dst).  UNION ALL, not UNION: an edge given both
  ways appears twice, which the recursions above do not notice (they take a minimum per node), while a
  distinct over both directions is a hash table of twice the edges that the recursive CTE re-evaluates
  without spilling: int_member_hops ran out of memory (3 GB limit) on a cluster of 6,000 near-identical
  pages (17.6M accepted edges), and builds in 10 s without it (the join below still holds every directed
  edge: less memory, not bounded).
-#}
{% macro undirected_edges(edges) -%}
    select src, dst from {{ edges }}
    union all
    select dst as src, src as dst from {{ edges }}
{%- endmacro %}
