{#-
  Guardrail (severity warn): one row per source or domain with at least var removal_warning_min_pages
  pages that loses more than var removal_warning_max_share of them to deduplication
  (source_removal_rates).  A warning, not an error: a mirror site may lose every page and be right.
-#}
{{ config(severity="warn") }}

with

rates as (

    select * from {{ ref("source_removal_rates") }}

),

final as (

    select *
    from rates
    where
        pages >= {{ var("removal_warning_min_pages") | int }}
        and removed_share > {{ var("removal_warning_max_share") | float }}

)

select * from final
