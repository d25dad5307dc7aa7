{#-
  Hooks that turn a user's mistake into one line naming the problem and what to do (issue 14); the
  checks themselves are webdedup/outputs/guards.py, registered as SQL functions from webdedup/engines/udfs.py.
-#}

{#-
  on-run-start: vars incremental_outputs and compact_outputs are true or false, and var output_dir must
  be a folder (or creatable) this user can write, and no other build may be writing to it (this build
  holds it until it ends), before any work.
-#}
{% macro check_run_environment() %}
    {#- the output vars, checked before any node runs (the exports read them last) -#}
    {%- if execute -%}
        {%- do incremental_outputs() -%}
        {%- do _dedup_choice("compact_outputs", var("compact_outputs") | string | lower, ["false", "true"]) -%}
    {%- endif -%}
    {{- return(adapter.dispatch("check_run_environment", "web_text_dedup")()) -}}
{% endmacro %}

{% macro default__check_run_environment() %}
    {{- return("select 1") -}}
{% endmacro %}

{% macro duckdb__check_run_environment() %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- set problem = run_query("select webdedup_claim_output_dir("
        ~ sql_string(var("output_dir", "output")) ~ ")").columns[0].values()[0] -%}
    {%- if problem -%}{{ exceptions.raise_compiler_error(problem) }}{%- endif -%}
    {{ return("select 1") }}
{% endmacro %}


{#-
  on-run-end (last): a build whose input has no documents succeeds with empty outputs
  (candidate_summary says 0); say so, as a warning, so it does not pass unnoticed.
-#}
{% macro warn_if_no_documents(results) %}
    {%- if not execute or flags.WHICH not in ("build", "run") -%}{{ return("select 1") }}{%- endif -%}
    {%- set summary = results | selectattr("node.unique_id", "equalto", "model.web_text_dedup.candidate_summary")
        | selectattr("status", "equalto", "success") | list -%}
    {%- if summary -%}
        {%- set documents = run_query("select documents from " ~ summary[0].node.relation_name).columns[0].values()[0] -%}
        {%- if documents == 0 -%}
            {%- do exceptions.warn("the input has no documents (" ~ documents_input_label()
                ~ "): every output is empty and candidate_summary says 0; check documents_path or the WARC vars") -%}
        {%- endif -%}
    {%- endif -%}
    {{ return("select 1") }}
{% endmacro %}
