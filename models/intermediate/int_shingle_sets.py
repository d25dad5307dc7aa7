"""The shingle set (distinct 64-bit shingle hashes) of every document in int_shingle_set_documents.

A thin adapter over webdedup/fingerprint.py: the same normalization and shingle hashing as
int_fingerprints, streamed in record batches through the same worker processes.  Incremental: a build
shingles only the documents whose set is missing or stale (webdedup/incremental.py), and the post-hook
drops the sets no longer needed, so the table always equals a full rebuild.
"""

from webdedup import spark_models
from webdedup.incremental import stream_stale


def model(dbt, session):
    # materialized (incremental on DuckDB, table on Spark), strategy and key: _intermediate__models.yml
    settings_relation = dbt.ref("int_run_settings")
    documents = dbt.ref("int_shingle_set_documents")
    if spark_models.is_spark_session(session):  # Spark: mapInArrow over the same batch function
        return spark_models.shingle_sets(settings_relation, documents, session)
    existing = str(dbt.this) if dbt.is_incremental else None
    return stream_stale(session, settings_relation, documents, existing, shingles_only=True)
