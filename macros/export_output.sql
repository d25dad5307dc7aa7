{#-
  export_output(file_name, order_by): a post-hook that writes the model's output file (CSV, Parquet or
  JSON by extension) in a fixed row order, so reruns give byte-identical files.  order_by none means the
  model's rows are already stored in key order (insertion order is preserved).

  Files are written to this run's hidden staging folder, <output_dir>/.staging-<invocation_id>; the
  on-run-end hook publish_outputs moves them into <output_dir> (one rename each, manifest.json last)
  only when the whole run succeeded, and discards them otherwise.  A failed or killed build therefore
  leaves the previous run's complete set of outputs untouched.
-#}
{% macro export_output(file_name, order_by) %}
    {{- return(adapter.dispatch("export_output", "web_text_dedup")(file_name, order_by)) -}}
{% endmacro %}

{% macro duckdb__export_output(file_name, order_by) %}
    {%- set extension = file_name.split(".")[-1] | lower -%}
    {%- set options = {
        "csv": "format csv, header true",
        "parquet": "format parquet, compression zstd, row_group_size 10000",
        "json": "format json",
    } -%}
    {%- if extension not in options -%}
        {{ exceptions.raise_compiler_error("export_output: unsupported output file type '" ~ file_name ~ "'") }}
    {%- endif -%}
    copy (select * from {{ this }}{% if order_by %} order by {{ order_by }}{% endif %})
    to {{ sql_string(staging_dir() ~ "/" ~ file_name) }} ({{ options[extension] }})
{% endmacro %}


{#-
  export_text_files(name_column, text_column): a post-hook that writes each row's text_column to the file
  named by name_column in this run's staging folder (the SVG pictures of lsh_pictures); they are
  published with the other output files.
-#}
{% macro export_text_files(name_column, text_column) %}
    {{- return(adapter.dispatch("export_text_files", "web_text_dedup")(name_column, text_column)) -}}
{% endmacro %}

{% macro duckdb__export_text_files(name_column, text_column) %}
    select webdedup_write_text({{ sql_string(staging_dir() ~ "/") }} || {{ name_column }}, {{ text_column }})
    from {{ this }}
{% endmacro %}

{% macro spark__export_text_files(name_column, text_column) %}
    {#- run_query fetches the result: dbt-spark's session cursor would leave a hook's select unevaluated -#}
    {%- if execute -%}
        {%- do run_query("select webdedup_write_text(concat(" ~ sql_string(staging_dir() ~ "/") ~ ", "
            ~ name_column ~ "), " ~ text_column ~ ") from " ~ this) -%}
    {%- endif -%}
    select 1
{% endmacro %}


{#- This run's staging folder for output files (absolute), created if missing. -#}
{% macro staging_dir(create=true) %}
    {%- set path = var("output_dir", "output") ~ "/.staging-" ~ invocation_id -%}
    {%- if not execute -%}{{ return(path) }}{%- endif -%}
    {#- only the exports create it: compiling (sqlfluff, docs generate) must not leave folders behind -#}
    {%- if not create -%}{{ return(output_dir() ~ "/.staging-" ~ invocation_id) }}{%- endif -%}
    {{ return(run_query("select webdedup_prepare_dir(" ~ sql_string(path) ~ ")").columns[0].values()[0]) }}
{% endmacro %}


{#-
  publish_outputs(results): on-run-end hook.  After a `dbt build` or `dbt run` in which nothing failed,
  moves this run's staged output files into <output_dir> (manifest.json last) and removes staging
  folders; otherwise discards this run's staging folder and leaves the published outputs as they were.
-#}
{% macro publish_outputs(results) %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- set staging = var("output_dir", "output") ~ "/.staging-" ~ invocation_id -%}
    {%- if run_succeeded(results) -%}
        {%- set message = run_query("select webdedup_publish_outputs(" ~ sql_string(staging) ~ ", "
            ~ sql_string(var("output_dir", "output")) ~ ")").columns[0].values()[0] -%}
    {%- else -%}
        {%- set message = "outputs not published (the run did not succeed); "
            ~ run_query("select webdedup_discard_dir(" ~ sql_string(staging) ~ ")").columns[0].values()[0] -%}
    {%- endif -%}
    {{ log("publish_outputs: " ~ message, info=True) }}
    {{ return("select 1") }}
{% endmacro %}


{#- True when no node of the run errored, failed or was skipped. -#}
{% macro run_succeeded(results) %}
    {%- for result in results -%}
        {%- if result.status in ("error", "fail", "skipped", "runtime error") -%}{{ return(false) }}{%- endif -%}
    {%- endfor -%}
    {{ return(true) }}
{% endmacro %}


{#- The absolute output folder (var output_dir, relative to the project root), created if missing. -#}
{% macro output_dir() %}
    {%- if not execute -%}{{ return(var("output_dir", "output")) }}{%- endif -%}
    {%- set result = run_query(
        "select webdedup_prepare_dir(" ~ sql_string(var("output_dir", "output")) ~ ")") -%}
    {{ return(result.columns[0].values()[0]) }}
{% endmacro %}
