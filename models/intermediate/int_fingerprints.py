"""Fingerprints per document: token and shingle counts, the shingle-set key, the MinHash signature and
the LSH band keys, with the body hash and settings they were computed from.

A thin adapter: the engine's ``fingerprints`` (webdedup/engines/duckdb_models.py or spark_models.py) runs
webdedup/core/fingerprint.py over the documents' shingled text (int_shingle_texts: the body, or the
body without boilerplate lines) in record batches, so memory stays bounded by batch_size.
Incremental on DuckDB: a build fingerprints only new or changed documents (all when the settings changed).
"""

from webdedup.engines import models_for


def model(dbt, session):
    # materialized (incremental on DuckDB, table on Spark), strategy and key: _intermediate__models.yml
    return models_for(session).fingerprints(
        session,
        settings=dbt.ref("int_run_settings"),
        documents=dbt.ref("int_shingle_texts"),
        existing=str(dbt.this) if dbt.is_incremental else None,
    )
