{#-
  The model holds exactly the keys of compare_model (its rows where compare_filter), each once: one test in
  place of not_null and unique on the key, row_count_equals and relationships both ways, reading the model
  once (a view such as the release is computed once, not once per test).  key: a column or a list of
  columns.  Fails with one row per key that breaks it: 'missing' (in compare_model only), 'not in
  compare_model' (in the model only, a null key included) or 'repeated' (more than once in the model).
-#}
{% test same_keys_as(model, compare_model, key, compare_filter="true") %}

{%- set columns = [key] if key is string else key -%}
{%- set matches = [] -%}
{%- for column in columns -%}
    {%- do matches.append("model_keys." ~ column ~ " = compare_keys." ~ column) -%}
{%- endfor %}

with

model_keys as (

    select
        {{ columns | join(", ") }},
        count(*) as model_rows
    from {{ model }}
    group by {{ columns | join(", ") }}

),

compare_keys as (

    select distinct {{ columns | join(", ") }}
    from {{ compare_model }}
    where {{ compare_filter }}

),

compared as (

    select
        {%- for column in columns %}
        coalesce(model_keys.{{ column }}, compare_keys.{{ column }}) as {{ column }},
        {%- endfor %}
        model_keys.model_rows,
        case
            when model_keys.model_rows is null then 'missing'
            when compare_keys.{{ columns[0] }} is null then 'not in compare_model'
            when model_keys.model_rows > 1 then 'repeated'
        end as problem
    from model_keys
    full outer join compare_keys
        on {{ matches | join(" and ") }}

)

select * from compared
where problem is not null

{% endtest %}
