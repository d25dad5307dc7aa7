"""The normalized text and the shingles (as text) of every document, for fingerprinted.parquet.

Enabled by var fingerprint_detail: full (_intermediate__models.yml).  A thin adapter over
webdedup/core/fingerprint_detail.py through the engine's ``fingerprint_details``.
"""

from webdedup.engines import models_for


def model(dbt, session):
    return models_for(session).fingerprint_details(
        session, settings=dbt.ref("int_run_settings"), documents=dbt.ref("stg_documents")
    )
