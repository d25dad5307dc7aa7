{#-
  publish_database(results): an on-run-end hook that publishes the database analysts read.

  dbt builds into the build file (profile path, DEDUP_DB_PATH, default target/web_text_dedup.duckdb).
  When a `dbt build` or `dbt run` finished without an error, failure or skip, the build file is
  checkpointed, attached again read-only (the hooks after this one only read it, and readers need no lock
  this process holds for writing), and published as <DEDUP_PUBLISH_DIR>/<same file name> (default: the
  project root): a hard link to the build file renamed into place, so no byte is copied and the disk holds
  the database once (a copy on a file system without hard links; webdedup/outputs/files.py).  The next
  dbt command gives the build a copy of its own before it writes (webdedup/engines/duckdb_plugin.py).  An
  analyst's open read-only connection keeps reading the previous complete file; new connections see the
  new complete file; the build never waits for, or is blocked by, readers.  A failed build publishes
  nothing.  When another process holds the published file open for writing (an analyst's read-write
  connection), the build refuses to replace it and names that process (docs/analysts.md).
-#}
{% macro publish_database(results) %}
    {{- return(adapter.dispatch("publish_database", "web_text_dedup")(results)) -}}
{% endmacro %}

{% macro default__publish_database(results) %}
    {{- return("select 1") -}}
{% endmacro %}

{% macro duckdb__publish_database(results) %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- set publish_dir = env_var("DEDUP_PUBLISH_DIR", ".") -%}
    {%- if publish_dir in ("", "none") -%}{{ return("select 1") }}{%- endif -%}
    {%- if not run_succeeded(results) -%}
        {{ log("publish_database: not published (the run did not succeed)", info=True) }}
        {{ return("select 1") }}
    {%- endif -%}
    {#- the build file is attached as target.database (profiles.yml) -#}
    {%- do run_query("checkpoint " ~ adapter.quote(target.database)) -%}
    {%- set build_path = run_query("select path from duckdb_databases() where database_name = "
        ~ sql_string(target.database)).columns[0].values()[0] -%}
    {#- an analyst's read-write connection to the published file would keep writing to a replaced,
        unlinked file and lose its work: refuse, naming the process (readers are no obstacle) -#}
    {%- set problem = run_query("select webdedup_published_file_problem(" ~ sql_string(build_path) ~ ", "
        ~ sql_string(publish_dir) ~ ")").columns[0].values()[0] -%}
    {%- if problem -%}{{ exceptions.raise_compiler_error("publish_database: " ~ problem) }}{%- endif -%}
    {%- do run_query(attach_read_only(build_path)) -%}
    {%- set published = run_query("select webdedup_publish_database(" ~ sql_string(build_path) ~ ", "
        ~ sql_string(publish_dir) ~ ")").columns[0].values()[0] -%}
    {{ log("publish_database: " ~ published, info=True) }}
    {{ return("select 1") }}
{% endmacro %}

{#- Reattach the checkpointed build file read-only under its name (the connection's own database is
    DuckDB's in-memory one: profiles.yml). -#}
{% macro attach_read_only(build_path) %}
    {%- set name = adapter.quote(target.database) -%}
    {%- set current = run_query("select current_database()").columns[0].values()[0] -%}
    {{- "use memory; detach " ~ name ~ "; attach " ~ sql_string(build_path) ~ " as " ~ name
        ~ " (read_only); use " ~ adapter.quote(current) -}}
{% endmacro %}
