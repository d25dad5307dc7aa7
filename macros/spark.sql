{#-
  Spark implementations of the dispatched macros that are more than a function name: connected
  components and hop distances (iterative, one query per round, driven by run_query until nothing
  changes), the output-file export (Spark's writer into one part file, renamed into the staging
  folder) and reading documents_path.  The DuckDB versions are beside the dispatchers in
  connected_components.sql, export_output.sql and documents_input.sql.

  Spark has no recursive CTE with a keyed working table (4.1 has WITH RECURSIVE, UNION ALL only and
  capped at 100 levels; 4.0 has none), so the graph algorithms keep their state in Parquet tables named
  after the calling model (<schema>.<model>__cc_*, <schema>.<model>__hops*), rewritten each round;
  the final ones (clusters__cc_edges: the stars, cluster_inspection__hops) stay until the next build
  so the model's query can read them; the other scratch tables are dropped.
-#}

{#- A SQL string literal for Spark, whose literals take backslash escapes. -#}
{% macro spark__sql_string(value) %}
    {{- return("'" ~ (value | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") -}}
{% endmacro %}


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
        {%- set max_rounds = var("graph_max_rounds", 1000) | int -%}
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
        cc_nodes.node_id,
        coalesce(cc_stars.b, cc_nodes.node_id) as component_id
    from {{ nodes }} as cc_nodes
    left join {{ edge_table }} as cc_stars on cc_nodes.node_id = cc_stars.a
{% endmacro %}


{#-
  Breadth-first search from every source at once: round k adds the unvisited neighbours of the nodes
  found in round k - 1 with hops = k, until a round finds none.  One round per hop of the largest
  eccentricity.
-#}
{% macro spark__hop_distances(sources, edges) %}
    {%- set edge_table = _spark_scratch("hops_edges") -%}
    {%- set hop_table = _spark_scratch("hops") -%}
    {%- set frontier_table = _spark_scratch("hops_frontier") -%}
    {%- if execute -%}
        {%- set max_rounds = var("graph_max_rounds", 1000) | int -%}
        {%- do _spark_replace_table(edge_table,
            "select distinct src, dst from (select src, dst from " ~ edges ~ " as e1"
            ~ " union all select dst as src, src as dst from " ~ edges ~ " as e2) as both_ways") -%}
        {%- do _spark_replace_table(hop_table,
            "select distinct node_id, 0 as hops from " ~ sources ~ " as s") -%}
        {%- set state = {"found": 1} -%}
        {%- for round in range(max_rounds) if state.found > 0 -%}
            {%- do _spark_replace_table(frontier_table,
                "select distinct e.dst as node_id, " ~ (round + 1) ~ " as hops"
                ~ " from " ~ hop_table ~ " as h inner join " ~ edge_table ~ " as e on h.node_id = e.src"
                ~ " left anti join " ~ hop_table ~ " as seen on e.dst = seen.node_id"
                ~ " where h.hops = " ~ round) -%}
            {%- set found = run_query("select count(*) from " ~ frontier_table).columns[0].values()[0] -%}
            {%- if found > 0 -%}
                {%- do run_query("insert into " ~ hop_table ~ " select node_id, hops from " ~ frontier_table) -%}
            {%- endif -%}
            {%- do state.update({"found": found}) -%}
        {%- endfor -%}
        {%- do run_query("drop table if exists " ~ frontier_table) -%}
        {%- do run_query("drop table if exists " ~ edge_table) -%}
        {%- if state.found > 0 -%}
            {{ exceptions.raise_compiler_error("hop_distances: still finding nodes after "
                ~ max_rounds ~ " rounds (raise var graph_max_rounds)") }}
        {%- endif -%}
    {%- endif %}
    select node_id, hops from {{ hop_table }}
{% endmacro %}


{#-
  Spark's writer puts one part file (one partition: REPARTITION(1), then SORT BY inside it) into a
  hidden folder in the staging folder; webdedup_finalize_export (a Python function registered by
  webdedup/spark_session.py) renames it to the output's name.  Every row passes through one task, as
  DuckDB's COPY writes one file; for outputs too big for one task, write the part folder instead and
  skip the rename (the files are Spark's Parquet/CSV parts, same columns).  order_by none means the
  first column.
-#}
{% macro spark__export_output(file_name, order_by) %}
    {%- set extension = file_name.split(".")[-1] | lower -%}
    {%- set options = {
        "csv": "using csv options (header 'true', escape '\"', nullValue '', emptyValue '\"\"',"
            ~ " timestampNTZFormat 'yyyy-MM-dd HH:mm:ss', timestampFormat 'yyyy-MM-dd HH:mm:ssXXX',"
            ~ " dateFormat 'yyyy-MM-dd')",
        "parquet": "using parquet options (compression 'zstd')",
        "json": "using json options (ignoreNullFields 'false', timestampNTZFormat 'yyyy-MM-dd HH:mm:ss')",
    } -%}
    {%- if extension not in options -%}
        {{ exceptions.raise_compiler_error("export_output: unsupported output file type '" ~ file_name ~ "'") }}
    {%- endif -%}
    {%- if not execute -%}{{ return("select 1") }}{%- endif -%}
    {%- set sort_key = order_by or adapter.get_columns_in_relation(this)[0].name -%}
    {%- set staging = staging_dir() -%}
    {%- set parts_dir = staging ~ "/.parts-" ~ file_name -%}
    {%- do run_query("insert overwrite directory " ~ sql_string(parts_dir) ~ " " ~ options[extension]
        ~ " select /*+ repartition(1) */ * from " ~ this ~ " sort by " ~ sort_key) -%}
    {#- run_query fetches the result: dbt-spark's session cursor would leave a hook's select unevaluated -#}
    {%- do run_query("select webdedup_finalize_export(" ~ sql_string(parts_dir) ~ ", "
        ~ sql_string(staging ~ "/" ~ file_name) ~ ")") -%}
    select 1
{% endmacro %}


{#-
  documents_path on Spark: Parquet files, globs and folders are read directly; CSV (header, all
  columns as text, quoted newlines allowed) through a temporary view.
-#}
{% macro spark__read_documents_files(path) %}
    {%- set lowered = path | lower -%}
    {%- if "`" in path -%}
        {{ exceptions.raise_compiler_error("documents_path '" ~ path ~ "' must not contain a backtick") }}
    {%- endif -%}
    {%- if lowered.endswith(".csv") or lowered.endswith(".csv.gz") or lowered.endswith(".tsv") -%}
        {%- if execute -%}
            {%- do run_query("create or replace temporary view webdedup_documents_csv using csv options (path "
                ~ sql_string(path) ~ ", header 'true', multiLine 'true', escape '\"', inferSchema 'false'"
                ~ (", sep '\\t'" if lowered.endswith(".tsv") else "") ~ ")") -%}
        {%- endif -%}
        {{ return("webdedup_documents_csv") }}
    {%- endif -%}
    {{ return("parquet.`" ~ path ~ "`") }}
{% endmacro %}
