{#-
  Precision, recall and F1 of the pipeline's decisions against the labeled pairs (seed labeled_pairs).
  A pair is predicted duplicate when its two documents end in the same cluster (what the release acts
  on).  Labeled pairs whose documents are not in this run's input are counted and ignored; when none
  of them is (another corpus than the fixture), labels_status says 'no labels for this input' and the
  counts and rates are null rather than zeros.
-#}

with

labeled_pairs as (

    select * from {{ ref("labeled_pairs") }}

),

clusters as (

    select * from {{ ref("clusters") }}

),

judged as (

    select
        labeled_pairs.is_duplicate as is_labeled_duplicate,
        l.cluster_id is not null and r.cluster_id is not null as is_present,
        coalesce(l.cluster_id = r.cluster_id, false) as is_predicted_duplicate
    from labeled_pairs
    left join clusters as l on labeled_pairs.left_doc_id = l.doc_id
    left join clusters as r on labeled_pairs.right_doc_id = r.doc_id

),

counts as (

    select
        count(*) as labeled_pairs,
        count(*) filter (where is_present) as evaluated_pairs,
        count(*) filter (where is_present and is_labeled_duplicate and is_predicted_duplicate) as true_positives,
        count(*) filter (where is_present and not is_labeled_duplicate and is_predicted_duplicate)
            as false_positives,
        count(*) filter (where is_present and is_labeled_duplicate and not is_predicted_duplicate)
            as false_negatives,
        count(*) filter (where is_present and not is_labeled_duplicate and not is_predicted_duplicate)
            as true_negatives
    from judged

),

evaluated as (

    select
        labeled_pairs,
        evaluated_pairs,
        case
            when evaluated_pairs = 0 then 'no labels for this input'
            else 'evaluated ' || evaluated_pairs || ' of ' || labeled_pairs || ' labeled pairs'
        end as labels_status,
        evaluated_pairs > 0 as has_labels,
        true_positives,
        false_positives,
        false_negatives,
        true_negatives
    from counts

),

final as (

    select
        labeled_pairs,
        evaluated_pairs,
        labels_status,
        case when has_labels then true_positives end as true_positives,
        case when has_labels then false_positives end as false_positives,
        case when has_labels then false_negatives end as false_negatives,
        case when has_labels then true_negatives end as true_negatives,
        true_positives / nullif(true_positives + false_positives, 0) as pair_precision,
        true_positives / nullif(true_positives + false_negatives, 0) as pair_recall,
        2.0 * true_positives / nullif(2 * true_positives + false_positives + false_negatives, 0) as f1
    from evaluated

)

select * from final
