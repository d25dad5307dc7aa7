"""The intersection size of the shingle sets of every pair of int_anchor_pairs (DuckDB only).

A thin adapter over webdedup/engines/anchor_scoring.py (the engine's ``anchor_intersections``): the pairs'
anchors are shingled from int_shingle_texts into a scratch file that lives only while this model runs,
and the pairs are counted partition by partition of that file (about var jaccard_block_mb of sets
each), so memory stays bounded whatever the number of pairs, and no shingle set is kept
in the database; macros/algorithm/exact_jaccard.sql (candidate_anchor_jaccard) turns the counts into
scored_pairs' Jaccard.  Incremental: a build counts only the pairs the table lacks (its pre-hook
deletes those no longer current).  On Spark this model is disabled and scored_pairs joins the shingle
rows of int_shingle_sets instead.
"""

from webdedup.engines import models_for


def model(dbt, session):
    # enabled on DuckDB only, incremental, the pre-hook and the block budget: _intermediate__models.yml
    block_mb = dbt.config.get("jaccard_block_mb")
    return models_for(session).anchor_intersections(
        session,
        anchor_pairs=dbt.ref("int_anchor_pairs"),
        documents=dbt.ref("int_shingle_texts"),
        groups=dbt.ref("int_shingle_set_groups"),
        settings=dbt.ref("int_run_settings"),
        block_mb=block_mb,
        existing=str(dbt.this) if dbt.is_incremental else None,
    )
