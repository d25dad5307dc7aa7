{#- A SQL string literal with embedded quotes escaped: the only way user-supplied text reaches SQL. -#}
{% macro sql_string(value) %}
    {{- return(adapter.dispatch("sql_string", "web_text_dedup")(value)) -}}
{% endmacro %}

{% macro default__sql_string(value) %}
    {{- return("'" ~ (value | string | replace("'", "''")) ~ "'") -}}
{% endmacro %}

{#- A SQL string literal for Spark, whose literals take backslash escapes. -#}
{% macro spark__sql_string(value) %}
    {{- return("'" ~ (value | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") -}}
{% endmacro %}
