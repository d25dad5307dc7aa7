{#-
  run_summary(results): the last on-run-end hook (after publish_outputs, publish_database and
  publish_pictures).  After a `dbt build` or `dbt run` it prints a short summary (with print(), so it
  shows with --quiet too): documents in, duplicate clusters, documents removed, representatives kept,
  the candidate reduction, the changes against the release published before (changelog), where the
  output files and the published database are, and the command to look at them.  The numbers are read
  from candidate_summary as this run built it; a run that did not build candidate_summary prints
  nothing, and a run that failed says that nothing was published.
  With DEDUP_SUMMARY_FILE set, the summary is written to that file instead of printed: `make run`
  prints it after dbt's own closing lines, so that it is the last thing on the screen.
-#}
{% macro run_summary(results) %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- if not run_succeeded(results) -%}
        {%- do _show_summary(["", "web_text_dedup: the build failed (see the errors above); the outputs and the"
            ~ " database were not published, the previous ones are unchanged."]) -%}
        {{ return("select 1") }}
    {%- endif -%}
    {%- set built = results | selectattr("node.unique_id", "equalto", "model.web_text_dedup.candidate_summary")
        | selectattr("status", "equalto", "success") | list -%}
    {%- if not built -%}{{ return("select 1") }}{%- endif -%}
    {%- set summary = run_query(
        "select documents, duplicate_clusters, removed_documents, representatives, candidate_pairs,"
        ~ " possible_pairs, candidate_reduction_pct from " ~ built[0].node.relation_name) -%}
    {%- set s = summary.rows[0] -%}
    {%- set lines = [
        "",
        "web_text_dedup: done",
        "  documents in          " ~ s[0],
        "  duplicate clusters    " ~ s[1],
        "  documents removed     " ~ s[2],
        "  representatives kept  " ~ s[3],
        "  candidate pairs       " ~ s[4] ~ " of " ~ s[5] ~ " possible (" ~ s[6] ~ "% fewer to score)",
        "  output files          " ~ output_dir(),
    ] -%}
    {%- do lines.extend(_changelog_summary(results)) -%}
    {%- do lines.extend(adapter.dispatch("run_summary_database", "web_text_dedup")()) -%}
    {%- do _show_summary(lines) -%}
    {{ return("select 1") }}
{% endmacro %}

{#- The changelog's line: documents per change against the previous release (when changelog was built). -#}
{% macro _changelog_summary(results) %}
    {%- set built = results | selectattr("node.unique_id", "equalto", "model.web_text_dedup.changelog")
        | selectattr("status", "equalto", "success") | list -%}
    {%- if not built -%}{{ return([]) }}{%- endif -%}
    {%- set counts = run_query("select change_type, count(*) from " ~ built[0].node.relation_name
        ~ " group by change_type order by change_type") -%}
    {%- set parts = [] -%}
    {%- for row in counts.rows -%}{%- do parts.append(row[0] ~ " " ~ row[1]) -%}{%- endfor -%}
    {{ return(["  changes vs release    " ~ (parts | join(", ") if parts else "none")
        ~ "   (changelog.parquet)"]) }}
{% endmacro %}

{% macro _show_summary(lines) %}
    {%- set path = env_var("DEDUP_SUMMARY_FILE", "") -%}
    {%- if path -%}
        {%- do run_query("select webdedup_write_text(" ~ sql_string(path) ~ ", " ~ sql_string(lines | join("\n") ~ "\n") ~ ")") -%}
    {%- else -%}
        {{ print(lines | join("\n")) }}
    {%- endif -%}
{% endmacro %}

{#- The summary's lines about the database and the next command, per engine. -#}
{% macro duckdb__run_summary_database() %}
    {%- set publish_dir = env_var("DEDUP_PUBLISH_DIR", ".") -%}
    {%- set build_path = run_query("select path from duckdb_databases() where database_name = "
        ~ sql_string(target.database)).columns[0].values()[0] -%}
    {%- if publish_dir in ("", "none") -%}
        {%- set database = build_path ~ " (the build file; publishing is off)" -%}
    {%- else -%}
        {%- set database = run_query("select webdedup_prepare_dir(" ~ sql_string(publish_dir) ~ ")")
            .columns[0].values()[0] ~ "/" ~ build_path.split("/")[-1] -%}
    {%- endif -%}
    {{ return([
        "  database              " ~ database,
        "                        results in schema " ~ target.schema ~ ", internals in " ~ target.schema
            ~ "_internal, seeds in " ~ target.schema ~ "_raw",
        "  next                  make sql Q=\"select * from cluster_inspection\"   (make sql: an interactive shell)",
    ]) }}
{% endmacro %}

{% macro default__run_summary_database() %}
    {{ return([
        "  tables                schema " ~ target.schema ~ " (" ~ target.type ~ " target; no published DuckDB file)",
        "  next                  make sql DB=:memory: Q=\"select * from '" ~ output_dir()
            ~ "/cluster_inspection.csv'\"",
    ]) }}
{% endmacro %}
