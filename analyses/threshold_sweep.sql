-- What the Jaccard threshold would change: accepted candidate pairs at thresholds 0.50 .. 1.00, and
-- pair-level precision and recall against the labeled pairs (seed labeled_pairs).  Only LSH candidates
-- are scored, so a labeled duplicate LSH never proposed is a false negative at every threshold.

with

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

labeled_pairs as (

    select * from {{ ref("labeled_pairs") }}

),

thresholds as (

    select cast(sweep.threshold as double) as threshold
    from (
        values (0.50), (0.55), (0.60), (0.65), (0.70), (0.75), (0.80), (0.85), (0.90), (0.95), (1.00)
    ) as sweep (threshold)

),

labeled_scores as (

    select
        labeled_pairs.is_duplicate as is_labeled_duplicate,
        scored_pairs.jaccard
    from labeled_pairs
    left join scored_pairs
        on
            labeled_pairs.left_doc_id = scored_pairs.left_doc_id
            and labeled_pairs.right_doc_id = scored_pairs.right_doc_id

),

accepted as (

    select
        thresholds.threshold,
        count(scored_pairs.left_doc_id) as accepted_pairs
    from thresholds
    left join scored_pairs on thresholds.threshold <= scored_pairs.jaccard
    group by thresholds.threshold

),

labeled as (

    select
        thresholds.threshold,
        count(*) filter (
            where labeled_scores.is_labeled_duplicate and labeled_scores.jaccard >= thresholds.threshold
        ) as true_positives,
        count(*) filter (
            where not labeled_scores.is_labeled_duplicate and labeled_scores.jaccard >= thresholds.threshold
        ) as false_positives,
        count(*) filter (
            where labeled_scores.is_labeled_duplicate and coalesce(labeled_scores.jaccard < thresholds.threshold, true)
        ) as false_negatives
    from thresholds
    cross join labeled_scores
    group by thresholds.threshold

),

final as (

    select
        accepted.threshold,
        accepted.accepted_pairs,
        labeled.true_positives,
        labeled.false_positives,
        labeled.false_negatives,
        labeled.true_positives / nullif(labeled.true_positives + labeled.false_positives, 0) as pair_precision,
        labeled.true_positives / nullif(labeled.true_positives + labeled.false_negatives, 0) as pair_recall
    from accepted
    inner join labeled on accepted.threshold = labeled.threshold

)

select * from final
order by threshold
