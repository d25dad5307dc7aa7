{#-
  check_engine(): the on-run-start hook that stops a build at once, with one line naming the fix, when
  the engine lacks the project's helpers.  DuckDB gets them from its profile plugin
  (webdedup/dbt_plugin.py), so there is nothing to check.  On Spark the webdedup_* SQL functions and the
  in-process Python-model submission are registered by the project's dbt plugin module
  (dbt_webdedup.py), which the standard `dbt` command loads once `make spark-install` has put the
  project on the venv's path; without it the first export would fail with "Cannot resolve routine".
-#}
{% macro check_engine() %}
    {{- return(adapter.dispatch("check_engine", "web_text_dedup")()) -}}
{% endmacro %}

{% macro default__check_engine() %}
    {{- return("select 1") -}}
{% endmacro %}

{% macro spark__check_engine() %}
    {%- if execute -%}
        {%- set found = run_query("show functions like 'webdedup_prepare_dir'") -%}
        {%- if found.rows | length == 0 -%}
            {{ exceptions.raise_compiler_error(
                "the Spark target needs the project's dbt plugin (dbt_webdedup.py), which this venv does not"
                ~ " load: run `make spark-install` once, or run dbt as `python -m webdedup.engines.dbt_spark build"
                ~ " --target spark`") }}
        {%- endif -%}
    {%- endif -%}
    {{- return("select 1") -}}
{% endmacro %}
