"""The shingle set (distinct 64-bit shingle hashes) of every document in int_shingle_set_documents.

A thin adapter: the engine's ``shingle_sets`` runs the same normalization and shingle hashing as
int_fingerprints (webdedup/core/fingerprint.py) in record batches.  Incremental on DuckDB: a build shingles
only the documents whose set is missing or stale, and the post-hook drops the sets no longer needed, so
the table always equals a full rebuild.
"""

from webdedup.engines import models_for


def model(dbt, session):
    # materialized (incremental on DuckDB, table on Spark), strategy and key: _intermediate__models.yml
    return models_for(session).shingle_sets(
        session,
        settings=dbt.ref("int_run_settings"),
        documents=dbt.ref("int_shingle_set_documents"),
        existing=str(dbt.this) if dbt.is_incremental else None,
    )
