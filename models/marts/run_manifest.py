"""The run manifest (manifest.json): input and its hash, settings, counts, output hashes, versions.

A thin adapter over webdedup/outputs/manifest.py (through the engine's ``manifest``).  It refs every
exported model (var output_files; a unit test keeps this list and that var equal) and lsh_pictures, so it
runs after all of them have staged their files and can count and hash them.
"""

from webdedup.engines import models_for


def model(dbt, session):
    dbt.config(materialized="table")
    output_files = dbt.config.get("output_files")  # var output_files as JSON (_marts__models.yml)
    return models_for(session).manifest(
        session,
        settings=dbt.ref("int_run_settings"),
        inputs=dbt.ref("int_input_files"),
        summary=dbt.ref("candidate_summary"),
        documents=dbt.ref("stg_documents"),
        pictures=dbt.ref("lsh_pictures"),
        exported={
            "fingerprinted": dbt.ref("fingerprinted"),
            "candidate_summary": dbt.ref("candidate_summary"),
            "scored_pairs": dbt.ref("scored_pairs"),
            "duplicate_pairs": dbt.ref("duplicate_pairs"),
            "clusters": dbt.ref("clusters"),
            "cluster_inspection": dbt.ref("cluster_inspection"),
            "deduped_documents": dbt.ref("deduped_documents"),
            "removals": dbt.ref("removals"),
            "changelog": dbt.ref("changelog"),
        },
        output_files=output_files,
    )
