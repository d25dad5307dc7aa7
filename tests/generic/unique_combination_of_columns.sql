{#- Fails with one row per duplicated combination of the given columns (and how often it occurs). -#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

with

counted as (

    select
        {{ combination_of_columns | join(", ") }},
        count(*) as occurrences
    from {{ model }}
    group by {{ combination_of_columns | join(", ") }}

)

select * from counted
where occurrences > 1

{% endtest %}
