{#-
  The LSH S-curve of this run: P(candidate | J) = 1 - (1 - J^rows)^bands at J = 0.00 .. 1.00, next to
  the candidates actually scored in each 0.01-wide Jaccard bucket and, dividing by P, an estimate of how
  many pairs with that Jaccard the corpus really holds (LSH only shows a P-weighted sample of them).
-#}

with

settings as (

    select * from {{ ref("int_run_settings") }}

),

scored_pairs as (

    select * from {{ ref("scored_pairs") }}

),

grid as (

    select
        i as bucket,
        i / 100.0 as jaccard
    from {{ integer_series(101) }}

),

observed as (

    select
        cast(floor(jaccard * 100 + 1e-9) as integer) as bucket,
        count(*) as candidate_pairs
    from scored_pairs
    group by cast(floor(jaccard * 100 + 1e-9) as integer)

),

curve as (

    select
        grid.jaccard,
        {{ lsh_candidate_probability("grid.jaccard", "settings.rows_per_band", "settings.bands") }} as p_candidate,
        abs(grid.jaccard - settings.threshold) < 0.005 as is_threshold,
        grid.jaccard >= settings.threshold - 1e-9 as is_above_threshold,
        coalesce(observed.candidate_pairs, 0) as candidate_pairs,
        settings.bands,
        settings.rows_per_band,
        settings.threshold
    from grid
    cross join settings
    left join observed on grid.bucket = observed.bucket

),

final as (

    select
        jaccard,
        p_candidate,
        is_threshold,
        is_above_threshold,
        candidate_pairs,
        case when p_candidate > 0 then candidate_pairs / p_candidate end as estimated_pairs,
        bands,
        rows_per_band,
        threshold
    from curve

)

select * from final
