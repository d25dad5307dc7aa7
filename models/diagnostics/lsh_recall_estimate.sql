{#-
  Expected LSH recall over the observed distribution of candidate Jaccards: each accepted pair stands
  for 1 / P(candidate | J) pairs of the corpus (Horvitz-Thompson), so expected_pair_recall =
  accepted pairs / estimated pairs at or above the threshold.  An estimate from what LSH saw; the
  missed-pair audit is the exact answer.
-#}

with

settings as (

    select * from {{ ref("int_run_settings") }}

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

weighted as (

    select
        scored_pairs.jaccard,
        {{ lsh_candidate_probability("scored_pairs.jaccard", "settings.rows_per_band", "settings.bands") }}
            as p_candidate
    from scored_pairs
    cross join settings
    where scored_pairs.is_duplicate

),

totals as (

    select
        count(*) as accepted_pairs,
        coalesce(sum(1 / p_candidate), 0) as estimated_pairs_above_threshold
    from weighted

),

final as (

    select
        settings.preset,
        settings.num_hashes,
        settings.bands,
        settings.rows_per_band,
        settings.threshold,
        {{ lsh_candidate_probability("settings.threshold", "settings.rows_per_band", "settings.bands") }}
            as p_candidate_at_threshold,
        totals.accepted_pairs,
        totals.estimated_pairs_above_threshold,
        case
            when totals.estimated_pairs_above_threshold > 0
                then totals.accepted_pairs / totals.estimated_pairs_above_threshold
        end as expected_pair_recall
    from settings
    cross join totals

)

select * from final
