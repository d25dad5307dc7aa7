{#-
  Like not_null, but the failing rows carry the identifying column, so `dbt test --store-failures` and
  the failure message point at the offending documents.
-#}
{% test not_null_listing_ids(model, column_name, id_column) %}

select
    {{ id_column }} as failing_id,
    '{{ column_name }} is null or could not be parsed' as problem
from {{ model }}
where {{ column_name }} is null

{% endtest %}
