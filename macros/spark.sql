{#-
  Spark implementations of the dispatched macros that are more than a function name: connected
  components and hop distances (iterative, one query per round, driven by run_query until nothing
  changes), the output-file export (Spark's writer into one part file, renamed into the staging
  folder) and reading documents_path.  The DuckDB versions are beside the dispatchers in
  connected_components.sql, export_output.sql and documents_input.sql.

  Spark has no recursive CTE with a keyed working table (4.1 has WITH RECURSIVE, UNION ALL only and
  capped at 100 levels; 4.0 has none), so the graph algorithms keep their state in Parquet tables named
  after the calling model (<schema>.<model>__cc_*, <schema>.<model>__hops*), rewritten each round;
  the final labels (clusters__cc_labels, cluster_inspection__hops) stay until the next build so the
  model's query can read them; the other scratch tables are dropped.
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
  Min-label propagation with pointer jumping: every node of an edge starts with the smallest id among
  itself and its neighbours; each round takes the smallest label among its neighbours' labels and the
  label of its own label, until no label changes.  Labels only decrease and stay inside the component, so
  the fixed point is the smallest node id of each component - the DuckDB result.  Isolated nodes never
  enter the tables (their component is themselves).  Rounds: about log2 of the component diameter
  with pointer jumping; var components_max_rounds (default 200) stops a runaway loop.
-#}
{% macro spark__connected_components(nodes, edges) %}
    {%- set edge_table = _spark_scratch("cc_edges") -%}
    {%- set label_table = _spark_scratch("cc_labels") -%}
    {%- set next_table = _spark_scratch("cc_labels_next") -%}
    {%- if execute -%}
        {%- set max_rounds = var("components_max_rounds", 200) | int -%}
        {%- do _spark_replace_table(edge_table,
            "select distinct src, dst from (select src, dst from " ~ edges ~ " as e1"
            ~ " union all select dst as src, src as dst from " ~ edges ~ " as e2) as both_ways"
            ~ " where src <> dst") -%}
        {%- do _spark_replace_table(label_table,
            "select src as node_id, least(src, min(dst)) as component_id from " ~ edge_table ~ " group by src") -%}
        {%- set state = {"rounds": 0, "changed": 1} -%}
        {%- for round in range(max_rounds) if state.changed > 0 -%}
            {%- do _spark_replace_table(next_table,
                "with neighbour_min as ("
                ~ " select e.src as node_id, min(l.component_id) as component_id"
                ~ " from " ~ edge_table ~ " as e inner join " ~ label_table ~ " as l on e.dst = l.node_id"
                ~ " group by e.src)"
                ~ " select l.node_id, least(l.component_id, n.component_id, coalesce(j.component_id, l.component_id))"
                ~ " as component_id, least(l.component_id, n.component_id, coalesce(j.component_id, l.component_id))"
                ~ " < l.component_id as changed"
                ~ " from " ~ label_table ~ " as l"
                ~ " inner join neighbour_min as n on l.node_id = n.node_id"
                ~ " left join " ~ label_table ~ " as j on l.component_id = j.node_id") -%}
            {%- set changed = run_query("select count(*) from " ~ next_table ~ " where changed").columns[0].values()[0] -%}
            {%- do _spark_replace_table(label_table, "select node_id, component_id from " ~ next_table) -%}
            {%- do state.update({"rounds": round + 1, "changed": changed}) -%}
        {%- endfor -%}
        {%- do run_query("drop table if exists " ~ next_table) -%}
        {%- do run_query("drop table if exists " ~ edge_table) -%}
        {%- if state.changed > 0 -%}
            {{ exceptions.raise_compiler_error("connected_components: labels still changing after "
                ~ max_rounds ~ " rounds (raise var components_max_rounds)") }}
        {%- endif -%}
        {{ log("connected_components: converged after " ~ state.rounds ~ " round(s)", info=True) }}
    {%- endif %}
    select
        cc_nodes.node_id,
        coalesce(cc_labels.component_id, cc_nodes.node_id) as component_id
    from {{ nodes }} as cc_nodes
    left join {{ label_table }} as cc_labels on cc_nodes.node_id = cc_labels.node_id
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
        {%- set max_rounds = var("components_max_rounds", 200) | int -%}
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
                ~ max_rounds ~ " rounds (raise var components_max_rounds)") }}
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
