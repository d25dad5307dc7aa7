{#-
  Missed-pair audit, step 2: LSH pair recall against the exact all-pairs join, overall and by Jaccard
  bucket, counted in document pairs.  Pairs inside a group of identical documents always count as
  found (they share every band); a pair of groups of sizes a and b stands for a x b document pairs.
-#}
{{ config(enabled=audit_enabled()) }}

with

audited as (

    select * from {{ ref("audit_pair_jaccards") }}

),

groups as (

    select * from {{ ref("int_shingle_set_groups") }}

),

settings as (

    select * from {{ ref("int_run_settings") }}

),

identical_pairs as (

    select
        'identical (1.0)' as jaccard_bucket,
        1.0 as bucket_floor,
        sum(group_size * (group_size - 1) / 2) as true_pairs,
        sum(group_size * (group_size - 1) / 2) as lsh_pairs
    from groups
    where is_anchor and shingle_count > 0 and group_size > 1

),

bucketed as (

    select
        case
            when jaccard >= 0.95 then '[0.95, 1.0]'
            when jaccard >= 0.9 then '[0.90, 0.95)'
            when jaccard >= 0.8 then '[0.80, 0.90)'
            when jaccard >= 0.75 then '[0.75, 0.80)'
            else '[threshold, 0.75)'
        end as jaccard_bucket,
        case
            when jaccard >= 0.95 then 0.95
            when jaccard >= 0.9 then 0.9
            when jaccard >= 0.8 then 0.8
            when jaccard >= 0.75 then 0.75
            else 0.0
        end as bucket_floor,
        document_pairs,
        is_lsh_candidate
    from audited

),

by_bucket as (

    select
        jaccard_bucket,
        bucket_floor,
        sum(document_pairs) as true_pairs,
        sum(case when is_lsh_candidate then document_pairs else 0 end) as lsh_pairs
    from bucketed
    group by jaccard_bucket, bucket_floor

    union all

    select * from identical_pairs
    where true_pairs > 0

),

overall as (

    select
        'all' as jaccard_bucket,
        -1.0 as bucket_floor,
        coalesce(sum(true_pairs), 0) as true_pairs,
        coalesce(sum(lsh_pairs), 0) as lsh_pairs
    from by_bucket

),

final as (

    select
        combined.jaccard_bucket,
        combined.bucket_floor,
        cast(combined.true_pairs as bigint) as true_pairs,
        cast(combined.lsh_pairs as bigint) as lsh_pairs,
        cast(combined.true_pairs - combined.lsh_pairs as bigint) as missed_pairs,
        combined.lsh_pairs / nullif(combined.true_pairs, 0) as pair_recall,
        settings.threshold,
        settings.bands,
        settings.rows_per_band
    from (
        select * from by_bucket
        union all
        select * from overall
    ) as combined
    cross join settings

)

select * from final
