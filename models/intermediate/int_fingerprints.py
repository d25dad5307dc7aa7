"""Fingerprints per document: normalized text, token and shingle counts, the shingle set, the MinHash
signature and the LSH band keys.

A thin adapter: all logic is in webdedup/fingerprint.py (plain functions, tested by pytest).  The input
is streamed in record batches and the result is returned as a RecordBatchReader, so memory stays bounded
by batch_size, not by the corpus.
"""

from webdedup import spark_models
from webdedup.fingerprint import settings_from_row, stream_fingerprints


def model(dbt, session):
    dbt.config(materialized="table")
    settings_relation = dbt.ref("int_run_settings")
    documents = dbt.ref("stg_documents")
    if spark_models.is_spark_session(session):  # Spark: mapInArrow over the same batch function
        return spark_models.fingerprints(settings_relation, documents, session)
    settings = settings_from_row(settings_relation.fetch_arrow_table().to_pylist()[0])
    batches = documents.project("doc_id, body").fetch_record_batch(settings.batch_size)
    return stream_fingerprints(batches, settings)
