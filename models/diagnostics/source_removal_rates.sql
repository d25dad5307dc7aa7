{#-
  Grain: one row per source and one per domain of the input (dimension = 'source' or 'domain'; a missing
  value is reported as ''). Why: a guardrail: a source or domain that loses nearly all of its pages to
  deduplication is more often a template or a crawl artefact than real duplication
  (tests/quality/assert_no_source_loses_most_pages.sql warns; docs/quality.md).
-#}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

pages as (

    select
        coalesce(documents.source, '') as source,
        coalesce(documents.domain, '') as domain,
        case when clusters.is_representative then 0 else 1 end as is_removed
    from documents
    inner join clusters on documents.doc_id = clusters.doc_id

),

by_dimension as (

    select
        'source' as dimension,
        source as dimension_value,
        count(*) as pages,
        sum(is_removed) as removed
    from pages
    group by source

    union all

    select
        'domain' as dimension,
        domain as dimension_value,
        count(*) as pages,
        sum(is_removed) as removed
    from pages
    group by domain

),

final as (

    select
        dimension,
        dimension_value,
        pages,
        removed,
        cast(removed as double) / pages as removed_share
    from by_dimension

)

select * from final
