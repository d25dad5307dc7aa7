"""The intersection size of the shingle sets of every distinct candidate anchor pair (DuckDB only).

A thin adapter over webdedup/blocked_jaccard.py: the pairs are scored in blocks of their low
documents, so memory stays bounded by var jaccard_block_mb (default 512) whatever the number of pairs;
macros/exact_jaccard.sql (candidate_anchor_jaccard) turns the counts into scored_pairs' Jaccard.  On
Spark this model is disabled and scored_pairs joins the shingle rows instead.
"""

from webdedup.blocked_jaccard import model_stream


def model(dbt, session):
    # enabled on DuckDB only, and the block budget: _intermediate__models.yml
    candidates = dbt.ref("int_candidate_pairs")
    shingle_sets = dbt.ref("int_shingle_sets")
    return model_stream(session, candidates, shingle_sets, dbt.config.get("jaccard_block_mb"))
