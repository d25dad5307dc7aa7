{#-
  The staged table's shape: every column of the model declared with meta.staged_type (a type category of
  macros/inputs/input_contract.sql: text, timestamp, integer, ...) has a type of that category in the built
  table.  One failing row per column that does not.  (A dbt model contract cannot be enforced on
  stg_documents: it carries the input's extra columns, which vary with the input.)
-#}
{% test staged_types_match(model) %}
{%- set problems = [] -%}
{%- if execute -%}
    {%- set node = graph.nodes.get("model." ~ project_name ~ "." ~ model.identifier) -%}
    {%- set declared = {} -%}
    {%- for name, column in node.columns.items() if column.meta.get("staged_type") -%}
        {%- do declared.update({name | lower: column.meta["staged_type"]}) -%}
    {%- endfor -%}
    {%- set found = {} -%}
    {%- for column in adapter.get_columns_in_relation(model) -%}
        {%- do found.update({column.name | lower: column.dtype}) -%}
    {%- endfor -%}
    {%- for name, category in declared.items() -%}
        {%- if name not in found -%}
            {%- do problems.append(name ~ " is missing") -%}
        {%- elif type_category(found[name]) != category -%}
            {%- do problems.append(name ~ " is " ~ found[name] ~ ", declared " ~ category) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endif %}

select problem
from (
    {%- for problem in problems %}
    select {{ sql_string(problem) }} as problem
    union all
    {%- endfor %}
    select cast(null as string) as problem
) as problems
where problem is not null

{% endtest %}
