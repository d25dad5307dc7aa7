"""Incremental runs: which documents the Python models still have to process.

``int_fingerprints`` and ``int_shingle_sets`` are incremental models (strategy delete+insert on doc_id):
a plain ``dbt build`` processes only the documents whose result is missing or stale, so a crawl folder
that gained a new batch costs a pass over that batch, not over the corpus.  Each row keeps the hash of
the body (stg_documents.body_hash) and the settings it was computed from; a document is processed again
when either differs (a changed page, or a new ``shingle_size`` / ``num_hashes`` / ``rows_per_band`` /
``seed``, which redoes every document), and the models' post-hooks delete the rows of documents that
left the input.  Everything downstream is recomputed in SQL from these tables, so an incremental build
gives exactly the tables of ``dbt build --full-refresh`` on the same input (tests compare every output).

``stg_warc_records`` reuses the rows of WARC files and byte ranges an earlier build read
(:func:`stored_warc_rows`; the keys are defined in webdedup/warc.py).
"""

from __future__ import annotations

import itertools

import duckdb
import pyarrow as pa

from webdedup.fingerprint import (
    FingerprintParams,
    settings_from_row,
    stream_fingerprints,
    stream_shingle_sets,
)
from webdedup.warc import READ_FAILURE, StoredRows
from webdedup.warc import SCHEMA as WARC_SCHEMA

_VIEWS = itertools.count()


def settings_key(params: FingerprintParams, *, shingles_only: bool = False) -> str:
    """The settings a row depends on, as text stored beside it (shingle sets depend on shingle_size only)."""
    if shingles_only:
        return f"shingle_size={params.shingle_size}"
    return (
        f"shingle_size={params.shingle_size} num_hashes={params.num_hashes} "
        f"rows_per_band={params.rows_per_band} seed={params.seed}"
    )


def _view(relation) -> str:
    """Name a relation as a temporary view, so that SQL text can refer to it."""
    name = f"webdedup_incremental_input_{next(_VIEWS)}"
    relation.create_view(name, replace=True)
    return name


def stale_documents(session, documents, existing: str | None, key: str):
    """The rows of ``documents`` (doc_id, body, body_hash) to (re)process, in input order, with a
    constant column ``settings_key`` = ``key``: all of them on a full build (``existing`` is None), when
    ``existing`` was built with other settings or by an older version of the project (no settings_key
    column); otherwise those whose doc_id is not in ``existing`` or whose body_hash differs."""
    selected = f"select doc_id, body, body_hash, '{key}' as settings_key from {_view(documents)} as current"
    if existing is not None:
        columns = {row[0] for row in session.sql(f"describe {existing}").fetchall()}
        same_settings = (
            "settings_key" in columns
            and not session.sql(f"select 1 from {existing} where settings_key <> '{key}' limit 1").fetchall()
        )
        if same_settings:
            selected += f"""
                where not exists (
                    select 1 from {existing} as previous
                    where previous.doc_id = current.doc_id and previous.body_hash = current.body_hash
                )"""
    return session.sql(selected)


def stream_stale(session, settings_relation, documents, existing: str | None, *, shingles_only: bool):
    """The DuckDB side of the two incremental Python models: the fingerprints (``shingles_only`` False)
    or the shingle sets (True) of the rows of ``documents`` (doc_id, body and body_hash, stg_documents'
    hash of the body) that ``existing`` lacks or holds stale, as a stream of record batches."""
    settings = settings_from_row(settings_relation.fetch_arrow_table().to_pylist()[0])
    documents = documents.project("doc_id, body, body_hash")
    key = settings_key(settings.params, shingles_only=shingles_only)
    pending = stale_documents(session, documents, existing, key)
    stream = stream_shingle_sets if shingles_only else stream_fingerprints
    return stream(pending.fetch_record_batch(settings.batch_size), settings)


class StoredWarcRows(StoredRows):
    """The previous build's stg_warc_records (``relation``, still in place while the model runs) as
    :class:`webdedup.warc.StoredRows`: the WARC files and byte ranges it read, by read_key."""

    def __init__(self, session, relation: str, keys: set[str], failed: set[str]):
        self.session, self.relation, self.keys, self.failed = session, relation, keys, failed

    def batches(self, keys: list[str]):
        wanted = _view(self.session.from_arrow(pa.table({"read_key": pa.array(keys, pa.string())})))
        columns = ", ".join(WARC_SCHEMA.names)
        query = f"select {columns} from {self.relation} where read_key in (select read_key from {wanted})"
        return self.session.sql(query).fetch_record_batch(1000)


def stored_warc_rows(session, relation: str, reread: bool) -> StoredWarcRows | None:
    """What the previous build of stg_warc_records read; None on the first build, with ``reread`` (var
    warc_reread) or when the table predates read_key: then every file and range is read."""
    if reread:
        return None
    try:
        keys = session.sql(f"""
            select read_key, bool_or(status = 'error' and starts_with(detail, '{READ_FAILURE}')) as failed
            from {relation}
            where read_key is not null
            group by read_key
        """).fetchall()
    except duckdb.Error:  # no previous table, or one without read_key
        return None
    return StoredWarcRows(
        session, relation, {key for key, _ in keys}, {key for key, failed in keys if failed}
    )
