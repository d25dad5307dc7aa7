{#-
  publish_pictures(results): an on-run-end hook (after publish_outputs) that puts this run's pictures
  where the docs find them.

  When a `dbt build` or `dbt run` succeeded and built lsh_pictures, each of its files (already published
  to <output_dir> by publish_outputs) is copied to <DEDUP_PUBLISH_DIR>/assets under a temporary name and
  renamed into place.  With the default DEDUP_PUBLISH_DIR (the project root) that is `assets/`, the
  folder dbt_project.yml lists in asset-paths: `dbt docs generate` copies it into target/ and the
  overview page shows the pictures.  A failed run, or one that did not build lsh_pictures, leaves
  assets/ as it was; an empty DEDUP_PUBLISH_DIR turns publishing off (as for the database).
-#}
{% macro publish_pictures(results) %}
    {{- return(adapter.dispatch("publish_pictures", "web_text_dedup")(results)) -}}
{% endmacro %}

{% macro default__publish_pictures(results) %}
    {{- return("select 1") -}}
{% endmacro %}

{% macro duckdb__publish_pictures(results) %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- set publish_dir = env_var("DEDUP_PUBLISH_DIR", ".") -%}
    {%- if publish_dir in ("", "none") or not run_succeeded(results) -%}{{ return("select 1") }}{%- endif -%}
    {%- set pictures = results | selectattr("node.unique_id", "equalto", "model.web_text_dedup.lsh_pictures")
        | selectattr("status", "equalto", "success") | list -%}
    {%- if not pictures -%}{{ return("select 1") }}{%- endif -%}
    {%- set published = run_query(
        "select webdedup_publish_file(" ~ sql_string(output_dir() ~ "/") ~ " || file_name, "
        ~ sql_string(publish_dir ~ "/assets") ~ ") from " ~ pictures[0].node.relation_name
        ~ " order by file_name").columns[0].values() -%}
    {{ log("publish_pictures: " ~ published | join(", "), info=True) }}
    {{ return("select 1") }}
{% endmacro %}
