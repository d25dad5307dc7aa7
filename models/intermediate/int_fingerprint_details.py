"""The normalized text and the shingles (as text) of every document, for fingerprinted.parquet.

Enabled by var fingerprint_detail: full (_intermediate__models.yml).  A thin adapter over
webdedup/fingerprint_detail.py; the same batch function on DuckDB and on Spark.
"""

from webdedup import fingerprint_detail, spark_models


def model(dbt, session):
    settings_relation = dbt.ref("int_run_settings")
    documents = dbt.ref("stg_documents")
    if spark_models.is_spark_session(session):
        return fingerprint_detail.spark_details(settings_relation, documents, session)
    return fingerprint_detail.stream_details(settings_relation, documents)
