"""The run's pictures as SVG text: the LSH S-curve and the histogram of candidate Jaccards.

A thin adapter over webdedup/outputs/pictures.py (through the engine's ``pictures``), fed from this run's
lsh_s_curve and scored_pairs.  Its post-hook writes each row's svg to the staging folder, published with
the other outputs; `make docs-pictures` copies them into assets/ for the docs overview page.
"""

from webdedup.engines import models_for


def model(dbt, session):
    dbt.config(materialized="table")
    return models_for(session).pictures(
        session,
        settings=dbt.ref("int_run_settings"),
        curve=dbt.ref("lsh_s_curve"),
        scored=dbt.ref("scored_pairs"),
    )
