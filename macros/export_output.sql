{#-
  export_output(file_name, order_by): a post-hook that writes the model to <output_dir>/<file_name>
  (CSV, Parquet or JSON by extension) in a fixed row order, so reruns give byte-identical files.
  order_by none means the model's rows are already stored in key order (insertion order is preserved).

  The file is written under a temporary name and renamed into place (atomic on one file system), so a
  reader or an interrupted build never sees a half-written output: it sees the previous file or the new
  one.  output_dir() creates the folder and returns its absolute path (webdedup/dbt_plugin.py).
-#}
{% macro export_output(file_name, order_by) %}
    {{- return(adapter.dispatch("export_output", "web_text_dedup")(file_name, order_by)) -}}
{% endmacro %}

{% macro duckdb__export_output(file_name, order_by) %}
    {%- set extension = file_name.split(".")[-1] | lower -%}
    {%- set options = {
        "csv": "format csv, header true",
        "parquet": "format parquet, compression zstd",
        "json": "format json",
    } -%}
    {%- if extension not in options -%}
        {{ exceptions.raise_compiler_error("export_output: unsupported output file type '" ~ file_name ~ "'") }}
    {%- endif -%}
    {%- set directory = output_dir() -%}
    {%- set final_path = directory ~ "/" ~ file_name -%}
    {%- set temporary_path = directory ~ "/." ~ file_name ~ "." ~ invocation_id ~ ".tmp" -%}
    copy (select * from {{ this }}{% if order_by %} order by {{ order_by }}{% endif %})
    to {{ sql_string(temporary_path) }} ({{ options[extension] }});
    select webdedup_publish({{ sql_string(temporary_path) }}, {{ sql_string(final_path) }})
{% endmacro %}


{#- The absolute output folder (var output_dir, relative to the project root), created if missing. -#}
{% macro output_dir() %}
    {%- if not execute -%}{{ return(var("output_dir", "output")) }}{%- endif -%}
    {%- set result = run_query(
        "select webdedup_prepare_dir(" ~ sql_string(var("output_dir", "output")) ~ ")") -%}
    {{ return(result.columns[0].values()[0]) }}
{% endmacro %}
