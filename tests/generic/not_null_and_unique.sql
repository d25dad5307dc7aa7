{#-
  One test per model for its required columns and its keys, instead of one dbt node per column and rule
  (each node costs dbt about 0.1 s of thread time whatever the table's size, and in `dbt build` a model's
  tests run before its children).  not_null: columns that are never null.  unique: columns, or lists of
  columns (a combination), whose values never repeat; as dbt's unique, a single column's nulls are not
  compared.  Fails with one row per broken rule: the rule, the column(s), the rows or values that break
  it and one example of a repeated value.
-#}
{% test not_null_and_unique(model, not_null=[], unique=[]) %}

{%- set keys = [] -%}
{%- for key in unique -%}
    {%- do keys.append([key] if key is string else key) -%}
{%- endfor -%}
{%- set checks = [] -%}
{%- if not not_null and not keys -%}
    {{ exceptions.raise_compiler_error("not_null_and_unique on " ~ model ~ ": give not_null or unique columns") }}
{%- endif %}

with

{% if not_null -%}
null_counts as (

    select
        {%- for column in not_null %}
        sum(case when {{ column }} is null then 1 else 0 end) as nulls_{{ loop.index }}
        {{- "," if not loop.last }}
        {%- endfor %}
    from {{ model }}

),

{%- for column in not_null %}
{%- do checks.append("select 'not_null' as rule, '" ~ column ~ "' as columns, nulls_" ~ loop.index
    ~ " as failing, cast(null as " ~ dbt.type_string() ~ ") as example from null_counts") %}
{%- endfor %}
{%- endif %}

{% for key in keys -%}
repeated_{{ loop.index }} as (

    select
        count(*) as failing,
        min(cast({{ key[0] }} as {{ dbt.type_string() }})) as example
    from (
        select {{ key | join(", ") }}
        from {{ model }}
        {%- if key | length == 1 %}
        where {{ key[0] }} is not null
        {%- endif %}
        group by {{ key | join(", ") }}
        having count(*) > 1
    ) as repeated_values

),

{%- do checks.append("select 'unique' as rule, '" ~ key | join(", ") ~ "' as columns, failing, example"
    ~ " from repeated_" ~ loop.index) %}
{% endfor -%}

checks as (

    {{ checks | join("\n    union all\n    ") }}

)

select * from checks
where failing > 0

{% endtest %}
