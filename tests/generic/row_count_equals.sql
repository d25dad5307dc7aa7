{#- Fails (one row with both counts) when the model's row count differs from the compared model's. -#}
{% test row_count_equals(model, compare_model, compare_filter="true", model_filter="true") %}

with

counts as (

    select
        (select count(*) from {{ model }} where {{ model_filter }}) as model_rows,
        (select count(*) from {{ compare_model }} where {{ compare_filter }}) as compare_rows

)

select * from counts
where model_rows <> compare_rows

{% endtest %}
