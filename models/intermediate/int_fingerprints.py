"""Fingerprints per document: token and shingle counts, the shingle-set key, the MinHash signature and
the LSH band keys, with the body hash and settings they were computed from.

A thin adapter: all logic is in webdedup/fingerprint.py and webdedup/incremental.py (plain functions,
tested by pytest).  The input is streamed in record batches and the result is returned as a
RecordBatchReader, so memory stays bounded by batch_size, not by the corpus.  Incremental: a build
fingerprints only new or changed documents (all of them when the settings changed).
"""

from webdedup import spark_models
from webdedup.fingerprint import settings_from_row, stream_fingerprints
from webdedup.incremental import settings_key, stale_documents, with_body_hash


def model(dbt, session):
    # materialized: incremental on DuckDB, table on Spark (see _intermediate__models.yml)
    dbt.config(
        incremental_strategy="delete+insert",
        unique_key="doc_id",
        on_schema_change="sync_all_columns",
    )
    settings_relation = dbt.ref("int_run_settings")
    documents = dbt.ref("stg_documents")
    if spark_models.is_spark_session(session):  # Spark: mapInArrow over the same batch function
        return spark_models.fingerprints(settings_relation, documents, session)
    settings = settings_from_row(settings_relation.fetch_arrow_table().to_pylist()[0])
    existing = str(dbt.this) if dbt.is_incremental else None
    hashed = with_body_hash(session, documents.project("doc_id, body"))
    pending = stale_documents(session, hashed, existing, settings_key(settings.params))
    return stream_fingerprints(pending.fetch_record_batch(settings.batch_size), settings)
