"""One row per WARC record read from var warc_paths (local files) or var warc_ranges_path (pinned byte
ranges), with its status, lineage and, for HTML responses, the extracted document.

A thin adapter over webdedup/warc/ (FastWARC + Resiliparse) through the engine's ``warc_records``.
Enabled only when a WARC var is set (see _staging__models.yml); the vars reach the model through its
config.  Rows are streamed in batches.  Files and byte ranges that an earlier build read (same file size
and modification time, same range, same extractor) are not read again: their rows are taken from this
model's previous table (var warc_reread: true reads everything again).
"""

from webdedup.engines import models_for


def model(dbt, session):
    dbt.config(materialized="table")
    # dbt passes a config value to a Python model only for a dbt.config.get call assigned on its own
    warc_paths = dbt.config.get("warc_paths")
    warc_ranges_path = dbt.config.get("warc_ranges_path")
    warc_base_url = dbt.config.get("warc_base_url")
    warc_reread = dbt.config.get("warc_reread")
    warc_workers = dbt.config.get("warc_workers")
    return models_for(session).warc_records(
        session,
        existing=str(dbt.this),
        warc_paths=warc_paths,
        warc_ranges_path=warc_ranges_path,
        warc_base_url=warc_base_url,
        warc_reread=warc_reread,
        warc_workers=warc_workers,
    )
