{#-
  One test per model for the rules its rows keep, instead of one dbt node per column and rule (each node
  costs dbt about 0.1 s of thread time whatever the table's size, and in `dbt build` a model's tests run
  before its children).  The rules that read only the model are counted in one scan of it.
  not_null: columns that are never null.  unique: columns, or lists of columns (a combination), whose
  values never repeat; as dbt's unique, a single column's nulls are not compared.  unique_index:
  combinations whose last column is a non-negative integer index (a band number), checked as unique is,
  as one bitmask of 64 indexes per value of the other columns (a group per document rather than per
  document and band: on int_band_memberships' 8M rows at 1M pages 0.2 s instead of 0.65-1.3 s); there
  failing counts the values of the other columns (per 64 indexes) that repeat an index.
  accepted_values: [{column, values, quote (default true)}], as dbt's accepted_values (a null passes).
  expressions: boolean SQL expressions true for every row (a null is false).  references: [{column, to,
  field}], as dbt's relationships: every non-null value of column is a value of field in the relation to.
  row_count_equals: {compare_model, compare_filter}: as many rows as compare_model has (where
  compare_filter).
  Fails with one row per broken rule: the rule, the column(s) or expression, the rows or values that
  break it and one example (a repeated or unknown value; for row counts both counts).
-#}
{% test model_rules(model, not_null=[], unique=[], unique_index=[], accepted_values=[], expressions=[],
    references=[], row_count_equals=none) %}

{%- set keys = [] -%}
{%- for key in unique -%}
    {%- do keys.append({"columns": [key] if key is string else key, "index": none}) -%}
{%- endfor -%}
{%- for key in unique_index -%}
    {%- do keys.append({"columns": key, "index": key[-1]}) -%}
{%- endfor -%}
{%- set checks = [] -%}
{%- if not (not_null or keys or accepted_values or expressions or references or row_count_equals) -%}
    {{ exceptions.raise_compiler_error("model_rules on " ~ model ~ ": give at least one rule") }}
{%- endif %}
{%- set string_type = dbt.type_string() %}

with

{% if not_null or accepted_values or expressions -%}
row_counts as (

    -- the rules that read one row at a time, in one scan of the model
    select
        {%- for column in not_null %}
        sum(case when {{ column }} is null then 1 else 0 end) as nulls_{{ loop.index }},
        {%- do checks.append("select 'not_null' as rule, " ~ sql_string(column) ~ " as columns, nulls_"
            ~ loop.index ~ " as failing, cast(null as " ~ string_type ~ ") as example from row_counts") %}
        {%- endfor %}
        {%- for rule in accepted_values %}
        {%- set listed = [] %}
        {%- for value in rule["values"] %}
            {%- do listed.append(sql_string(value) if rule.get("quote", true) else value | string) %}
        {%- endfor %}
        {%- set unaccepted = rule.column ~ " is not null and " ~ rule.column ~ " not in (" ~ listed | join(", ") ~ ")" %}
        sum(case when {{ unaccepted }} then 1 else 0 end) as unaccepted_{{ loop.index }},
        min(case when {{ unaccepted }} then cast({{ rule.column }} as {{ string_type }}) end)
            as unaccepted_example_{{ loop.index }},
        {%- do checks.append("select 'accepted_values' as rule, " ~ sql_string(rule.column) ~ " as columns,"
            ~ " unaccepted_" ~ loop.index ~ " as failing, unaccepted_example_" ~ loop.index ~ " as example"
            ~ " from row_counts") %}
        {%- endfor %}
        {%- for expression in expressions %}
        sum(case when coalesce({{ expression }}, false) then 0 else 1 end) as untrue_{{ loop.index }},
        {%- do checks.append("select 'expression' as rule, " ~ sql_string(expression) ~ " as columns, untrue_"
            ~ loop.index ~ " as failing, cast(null as " ~ string_type ~ ") as example from row_counts") %}
        {%- endfor %}
        count(*) as scanned_rows
    from {{ model }}

),

{% endif -%}

{% for reference in references -%}
unreferenced_{{ loop.index }} as (

    select
        count(*) as failing,
        min(cast(child.{{ reference.column }} as {{ string_type }})) as example
    from {{ model }} as child
    -- as dbt's relationships: a repeated referenced value repeats only rows that are not counted
    left join (select {{ reference.field }} as referenced from {{ reference.to }}) as parent
        on child.{{ reference.column }} = parent.referenced
    where child.{{ reference.column }} is not null and parent.referenced is null

),

{%- do checks.append("select 'references' as rule, " ~ sql_string(reference.column ~ " -> "
    ~ reference.to.identifier ~ "." ~ reference.field) ~ " as columns, failing, example from unreferenced_"
    ~ loop.index) %}
{% endfor -%}

{% if row_count_equals -%}
{%- set compare_filter = row_count_equals.get("compare_filter", "true") %}
compared_counts as (

    select
        {#- the model's rows as row_counts' scan counted them, when it ran #}
        {% if not_null or accepted_values or expressions -%}
        (select scanned_rows from row_counts)
        {%- else -%}
        (select count(*) from {{ model }})
        {%- endif %} as model_rows,
        (select count(*) from {{ row_count_equals.compare_model }} where {{ compare_filter }}) as compare_rows

),

{%- do checks.append("select 'row_count_equals' as rule, " ~ sql_string(row_count_equals.compare_model.identifier
    ~ ("" if compare_filter == "true" else " where " ~ compare_filter)) ~ " as columns,"
    ~ " abs(model_rows - compare_rows) as failing, concat(cast(model_rows as " ~ string_type ~ "), ' rows against ',"
    ~ " cast(compare_rows as " ~ string_type ~ ")) as example from compared_counts") %}
{% endif -%}

{% for key in keys -%}
{%- set grouped = key.columns if key.index is none else key.columns[:-1] %}
repeated_{{ loop.index }} as (

    select
        count(*) as failing,
        min(cast({{ key.columns[0] }} as {{ string_type }})) as example
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

{%- do checks.append("select 'unique' as rule, " ~ sql_string(key.columns | join(", ")) ~ " as columns, failing,"
    ~ " example from repeated_" ~ loop.index) %}
{% endfor -%}

checks as (

    {{ checks | join("\n    union all\n    ") }}

)

select * from checks
where failing > 0

{% endtest %}
