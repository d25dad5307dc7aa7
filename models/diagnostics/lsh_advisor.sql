{#-
  Which (bands, rows) split to use for a hash budget (var advisor_hash_budget, default num_hashes) at
  this run's threshold: for every split with bands x rows = budget, P(candidate) at the threshold, the
  false-positive area (integral of P over J below the threshold) and false-negative area (integral of
  1 - P above it), and the candidate pairs it would produce on this corpus, estimated from the scored
  pairs (each weighted by P_split(J) / P_current(J)).
-#}
{%- set budget = _dedup_int(
    "advisor_hash_budget", var("advisor_hash_budget"), 1, 4096, dedup_settings().num_hashes) %}

with

settings as (

    select * from {{ ref("int_run_settings") }}

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

splits as (

    select
        rows_per_band,
        cast({{ budget }} / rows_per_band as bigint) as bands
    from (select i + 1 as rows_per_band from {{ integer_series(budget) }}) as candidates_rows
    where {{ budget }} % rows_per_band = 0

),

grid as (

    select (i + 0.5) / 1000.0 as jaccard
    from {{ integer_series(1000) }}

),

areas as (

    select
        splits.bands,
        splits.rows_per_band,
        sum(
            case
                when grid.jaccard < settings.threshold
                    then {{ lsh_candidate_probability("grid.jaccard", "splits.rows_per_band", "splits.bands") }}
                else 0
            end
        ) / 1000.0 as false_positive_area,
        sum(
            case
                when grid.jaccard >= settings.threshold
                    then 1 - {{ lsh_candidate_probability("grid.jaccard", "splits.rows_per_band", "splits.bands") }}
                else 0
            end
        ) / 1000.0 as false_negative_area
    from splits
    cross join grid
    cross join settings
    group by splits.bands, splits.rows_per_band

),

expected as (

    select
        splits.bands,
        splits.rows_per_band,
        sum(
            ({{ lsh_candidate_probability("scored_pairs.jaccard", "splits.rows_per_band", "splits.bands") }})
            / nullif(
                {{ lsh_candidate_probability("scored_pairs.jaccard", "settings.rows_per_band", "settings.bands") }}, 0
            )
        ) as estimated_candidate_pairs
    from splits
    cross join scored_pairs
    cross join settings
    group by splits.bands, splits.rows_per_band

),

final as (

    select
        areas.bands,
        areas.rows_per_band,
        {{ budget }} as num_hashes,
        settings.threshold,
        {{ lsh_candidate_probability("settings.threshold", "areas.rows_per_band", "areas.bands") }}
            as p_candidate_at_threshold,
        areas.false_positive_area,
        areas.false_negative_area,
        coalesce(expected.estimated_candidate_pairs, 0) as estimated_candidate_pairs,
        areas.bands = settings.bands and areas.rows_per_band = settings.rows_per_band as is_current
    from areas
    cross join settings
    left join expected
        on areas.bands = expected.bands and areas.rows_per_band = expected.rows_per_band

)

select * from final
