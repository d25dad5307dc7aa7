-- What the Jaccard threshold would change: accepted candidate pairs at thresholds 0.50 .. 1.00.
-- Only LSH candidates are scored, so pairs LSH never proposed cannot appear at any threshold.

with

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

thresholds as (

    select cast(sweep.threshold as double) as threshold
    from (
        values (0.50), (0.55), (0.60), (0.65), (0.70), (0.75), (0.80), (0.85), (0.90), (0.95), (1.00)
    ) as sweep (threshold)

),

final as (

    select
        thresholds.threshold,
        count(scored_pairs.left_doc_id) as accepted_pairs,
        count(scored_pairs.left_doc_id) filter (where scored_pairs.jaccard = 1.0) as exact_pairs
    from thresholds
    left join scored_pairs on thresholds.threshold <= scored_pairs.jaccard
    group by thresholds.threshold

)

select * from final
order by threshold
