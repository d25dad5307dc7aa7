{#-
  WARC input only: how the records read by stg_warc_records were handled, one row per status with its
  record count, the files involved and the distinct details (why records were skipped, what failed and
  where).  Every status of the seed warc_record_statuses appears, in its report_order, with 0 when no
  record had it, so a report always shows the full split.
-#}

with

records as (

    select * from {{ ref("stg_warc_records") }}

),

statuses as (

    select * from {{ ref("warc_record_statuses") }}

),

details as (

    select
        status,
        case
            when status = 'error'
                then warc_filename || '@' || cast(warc_record_offset as varchar) || ': ' || detail
            else detail
        end as detail,
        warc_filename
    from records

),

counted as (

    select
        status,
        count(*) as records,
        count(distinct warc_filename) as files,
        {{ agg_join("distinct detail", "detail", 20, "'; '") }} as details
    from details
    group by status

),

final as (

    select
        statuses.status,
        coalesce(counted.records, 0) as records,
        coalesce(counted.files, 0) as files,
        counted.details
    from statuses
    left join counted on statuses.status = counted.status
    order by statuses.report_order

)

select * from final
