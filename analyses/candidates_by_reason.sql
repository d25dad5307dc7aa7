-- How the LSH candidates were decided: count, Jaccard range and cross-domain share per reason.
-- Compile with `dbt compile --select candidates_by_reason` and run the SQL in target/compiled.

with

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

final as (

    select
        reason,
        count(*) as pairs,
        min(jaccard) as min_jaccard,
        max(jaccard) as max_jaccard,
        avg(signature_overlap) as mean_signature_overlap,
        avg(case when is_cross_domain then 1.0 else 0.0 end) as cross_domain_share
    from scored_pairs
    group by reason

)

select * from final
order by pairs desc
