{#- A SQL string literal with embedded quotes escaped: the only way user-supplied text reaches SQL. -#}
{% macro sql_string(value) %}
    {{- return("'" ~ (value | string | replace("'", "''")) ~ "'") -}}
{% endmacro %}
