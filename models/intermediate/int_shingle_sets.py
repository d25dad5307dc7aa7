"""The shingle set (distinct 64-bit shingle hashes) of every document in int_shingle_set_documents.

A thin adapter over webdedup/fingerprint.py: the same normalization and shingle hashing as
int_fingerprints, streamed in record batches through the same worker processes.  Incremental: a build
shingles only the documents whose set is missing or stale (webdedup/incremental.py), and the post-hook
drops the sets no longer needed, so the table always equals a full rebuild.
"""

from webdedup import spark_models
from webdedup.fingerprint import settings_from_row, stream_shingle_sets
from webdedup.incremental import settings_key, stale_documents


def model(dbt, session):
    # materialized: incremental on DuckDB, table on Spark (see _intermediate__models.yml)
    dbt.config(
        incremental_strategy="delete+insert",
        unique_key="doc_id",
        on_schema_change="sync_all_columns",
    )
    settings_relation = dbt.ref("int_run_settings")
    documents = dbt.ref("int_shingle_set_documents")
    if spark_models.is_spark_session(session):  # Spark: mapInArrow over the same batch function
        return spark_models.shingle_sets(settings_relation, documents, session)
    settings = settings_from_row(settings_relation.fetch_arrow_table().to_pylist()[0])
    existing = str(dbt.this) if dbt.is_incremental else None
    pending = stale_documents(session, documents, existing, settings_key(settings.params, shingles_only=True))
    return stream_shingle_sets(pending.fetch_record_batch(settings.batch_size), settings)
