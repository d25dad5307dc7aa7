"""Fingerprints per document: token and shingle counts, the shingle-set key, the MinHash signature and
the LSH band keys, with the body hash and settings they were computed from.

A thin adapter: all logic is in webdedup/fingerprint.py and webdedup/incremental.py (plain functions,
tested by pytest).  The input is streamed in record batches and the result is returned as a
RecordBatchReader, so memory stays bounded by batch_size, not by the corpus.  Incremental: a build
fingerprints only new or changed documents (all of them when the settings changed).
"""

from webdedup import spark_models
from webdedup.incremental import stream_stale


def model(dbt, session):
    # materialized (incremental on DuckDB, table on Spark), strategy and key: _intermediate__models.yml
    settings_relation = dbt.ref("int_run_settings")
    documents = dbt.ref("stg_documents")
    if spark_models.is_spark_session(session):  # Spark: mapInArrow over the same batch function
        return spark_models.fingerprints(settings_relation, documents, session)
    existing = str(dbt.this) if dbt.is_incremental else None
    return stream_stale(session, settings_relation, documents, existing, shingles_only=False)
