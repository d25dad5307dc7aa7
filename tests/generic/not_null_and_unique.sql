{#-
  One test per model for its required columns and its keys, instead of one dbt node per column and rule
  (each node costs dbt about 0.1 s of thread time whatever the table's size, and in `dbt build` a model's
  tests run before its children).  not_null: columns that are never null.  unique: columns, or lists of
  columns (a combination), whose values never repeat; as dbt's unique, a single column's nulls are not
  compared.  unique_index: combinations whose last column is a non-negative integer index (a band
  number), checked as unique is, as one bitmask of 64 indexes per value of the other columns (a group per
  document rather than per document and band: on int_band_memberships' 8M rows at 1M pages 0.2 s instead
  of 0.65-1.3 s); there failing counts the values of the other columns (per 64 indexes) that repeat an
  index.  Fails with one row per broken rule: the rule, the column(s), the rows or values that break it
  and one example of a repeated value.
-#}
{% test not_null_and_unique(model, not_null=[], unique=[], unique_index=[]) %}

{%- set keys = [] -%}
{%- for key in unique -%}
    {%- do keys.append({"columns": [key] if key is string else key, "index": none}) -%}
{%- endfor -%}
{%- for key in unique_index -%}
    {%- do keys.append({"columns": key, "index": key[-1]}) -%}
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
{%- set grouped = key.columns if key.index is none else key.columns[:-1] %}
repeated_{{ loop.index }} as (

    select
        count(*) as failing,
        min(cast({{ key.columns[0] }} as {{ dbt.type_string() }})) as example
    from (
        select {{ grouped | join(", ") }}
        from {{ model }}
        {%- if key.index is none and grouped | length == 1 %}
        where {{ grouped[0] }} is not null
        {%- endif %}
        group by {{ grouped | join(", ") }}
        {%- if key.index is none %}
        having count(*) > 1
        {%- else %}, {{ index_block(key.index) }}
        having
            -- as many rows as distinct indexes among the block's 64, a null index once at most, none negative
            count({{ key.index }}) <> {{ distinct_indexes_in_block(key.index) }}
            or count(*) - count({{ key.index }}) > 1
            or min({{ key.index }}) < 0
        {%- endif %}
    ) as repeated_values

),

{%- do checks.append("select 'unique' as rule, '" ~ key.columns | join(", ") ~ "' as columns, failing, example"
    ~ " from repeated_" ~ loop.index) %}
{% endfor -%}

checks as (

    {{ checks | join("\n    union all\n    ") }}

)

select * from checks
where failing > 0

{% endtest %}
