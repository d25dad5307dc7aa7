"""The Python models on DuckDB: each function is one model's body, with the signature its Spark twin
(engines/spark_models.py) has.  A model passes its refs in as DuckDB relations.

Incremental fingerprints: ``int_fingerprints`` is an incremental model (strategy delete+insert on
doc_id): a plain ``dbt build`` processes only the documents whose result is missing or stale, so a crawl
folder that gained a new batch costs a pass over that batch, not over the corpus.  Each row keeps the
hash of the body (stg_documents.body_hash) and the settings it was computed from
(``FingerprintParams.key``); a document is processed again when either differs, and the model's
post-hook deletes the rows of documents that left the input.  The LSH stages after it
(int_band_memberships, int_anchor_pairs, int_anchor_intersections) are incremental too
(macros/algorithm/incremental_lsh.sql); everything else downstream is recomputed in SQL, so an
incremental build gives exactly the tables of ``dbt build --full-refresh``.

``warc_records`` reuses the rows of WARC files and byte ranges an earlier build read
(:func:`stored_warc_rows`; the keys are defined in webdedup/warc/reuse.py).
"""

from __future__ import annotations

import itertools
import json

import duckdb
import pyarrow as pa

from webdedup.core.fingerprint import fingerprint_batch
from webdedup.core.fingerprint_detail import DETAIL_SCHEMA, detail_batch
from webdedup.core.stream import iter_batches, settings_from_row, stream_fingerprints
from webdedup.engines.anchor_scoring import model_stream
from webdedup.engines.duckdb_memory import STREAM_LEND_BYTES, lend
from webdedup.outputs.manifest import INPUT_FILE_SCHEMA, build_manifest, input_file_rows
from webdedup.outputs.pictures import render_pictures
from webdedup.warc.reader import read_warc_batches
from webdedup.warc.reuse import StoredRows
from webdedup.warc.schema import READ_FAILURE
from webdedup.warc.schema import SCHEMA as WARC_SCHEMA

_VIEWS = itertools.count()


def _view(relation) -> str:
    """Name a relation as a temporary view, so that SQL text can refer to it."""
    name = f"webdedup_incremental_input_{next(_VIEWS)}"
    relation.create_view(name, replace=True)
    return name


def stale_documents(session, documents, existing: str | None, key: str):
    """The rows of ``documents`` (doc_id, body, body_hash) to (re)process, with a constant column
    ``settings_key`` = ``key``: all of them, in input order, on a full build (``existing`` is None), when
    ``existing`` was built with other settings or by an older version of the project (no settings_key
    column); otherwise those whose doc_id is not in ``existing`` or whose body_hash differs."""
    view = _view(documents)
    selected = f"select doc_id, body, body_hash, '{key}' as settings_key from {view} as current"
    if existing is not None:
        columns = {row[0] for row in session.sql(f"describe {existing}").fetchall()}
        same_settings = (
            "settings_key" in columns
            and not session.sql(f"select 1 from {existing} where settings_key <> '{key}' limit 1").fetchall()
        )
        if same_settings:
            # the stale ids first, from the narrow columns; then only their bodies are read (DuckDB
            # filters the scan by the few ids: 0.1 s where an anti join carrying every body took 1.4 s
            # at 1M pages)
            selected += f"""
                where doc_id in (
                    select stale.doc_id from {view} as stale
                    anti join {existing} as previous
                        on previous.doc_id = stale.doc_id and previous.body_hash = stale.body_hash
                )"""
    return session.sql(selected)


def _lent(connection, batches):
    """``batches``, with DuckDB's memory limit lowered by STREAM_LEND_BYTES while they are produced."""
    with lend(connection, STREAM_LEND_BYTES):
        yield from batches


def fingerprints(session, *, settings, documents, existing: str | None):
    """int_fingerprints: one row per new or changed document of ``documents`` (doc_id, body and body_hash,
    stg_documents' hash of the body) that ``existing`` lacks or holds stale (all on a full build), as a
    stream of record batches."""
    run = settings_from_row(settings.fetch_arrow_table().to_pylist()[0])
    documents = documents.project("doc_id, body, body_hash")
    pending = stale_documents(session, documents, existing, run.params.key(shingles_only=False))
    stream = stream_fingerprints(pending.fetch_record_batch(run.batch_size), run)
    return pa.RecordBatchReader.from_batches(stream.schema, _lent(session.cursor(), stream))


def fingerprint_details(session, *, settings, documents):
    """int_fingerprint_details: every document's normalized text and shingles, streamed in batches."""
    run = settings_from_row(settings.fetch_arrow_table().to_pylist()[0])
    reader = documents.project("doc_id, body").fetch_record_batch(run.batch_size)
    batches = iter_batches(reader, run, detail_batch, "fingerprint detail")
    return pa.RecordBatchReader.from_batches(DETAIL_SCHEMA, batches)


def anchor_intersections(
    session, *, anchor_pairs, documents, groups, settings, block_mb, existing: str | None
):
    """int_anchor_intersections: the shared shingles of the anchor pairs ``existing`` lacks (all on a full
    build), over sets held only while they are counted (webdedup/engines/anchor_scoring.py)."""
    return model_stream(session, anchor_pairs, documents, groups, settings, block_mb, existing)


def pictures(session, *, settings, curve, scored):
    """lsh_pictures: one row per SVG picture (picture, file_name, svg)."""
    row = settings.fetch_arrow_table().to_pylist()[0]
    rows = render_pictures(
        curve=curve.project("jaccard, p_candidate").fetchall(),
        jaccards=scored.project("jaccard").to_arrow_table().column("jaccard"),
        threshold=row["threshold"],
        bands=row["bands"],
        rows_per_band=row["rows_per_band"],
    )
    return pa.Table.from_pylist(rows)


def input_files(session, *, settings, existing: str):
    """int_input_files: one row per input file, with its size and sha256; the sha256 of a file that
    ``existing`` (the previous table) holds under the same file_key is taken from it, not computed again."""
    try:
        stored = session.sql(f"select file_key, sha256 from {existing} where file_key is not null")
        known = dict(stored.fetchall())
    except duckdb.Error:  # no previous table, or one without file_key
        known = {}
    rows = input_file_rows(settings.fetch_arrow_table().to_pylist()[0], known)
    return pa.Table.from_pylist(rows, schema=INPUT_FILE_SCHEMA)


def manifest(session, *, settings, inputs, summary, documents, pictures, exported: dict, output_files: str):
    """run_manifest: one row.  ``inputs`` is int_input_files, ``exported`` maps the exported models to their
    relations, ``output_files`` is var output_files as JSON (model -> file and row order); the pictures are
    lsh_pictures' files."""
    files = json.loads(output_files)
    outputs = [
        (files[name]["file"], relation.count("*").fetchall()[0][0]) for name, relation in exported.items()
    ]
    outputs += [(name, None) for (name,) in pictures.project("file_name").order("file_name").fetchall()]
    row = build_manifest(
        settings_row=settings.fetch_arrow_table().to_pylist()[0],
        summary=summary.fetch_arrow_table().to_pylist()[0],
        source_counts=dict(documents.aggregate("source, count(*)").fetchall()),
        outputs=outputs,
        input_rows=inputs.order("input_order").fetch_arrow_table().to_pylist(),
        engine="duckdb",
        fingerprints=f"{fingerprint_batch.__module__}.{fingerprint_batch.__qualname__}",
    )
    return pa.Table.from_pylist([row])


def warc_records(
    session, *, existing: str, warc_paths, warc_ranges_path, warc_base_url, warc_reread, warc_workers
):
    """stg_warc_records: one row per WARC record read, reusing the rows of what ``existing`` read."""
    return read_warc_batches(
        warc_paths=warc_paths or "",
        warc_ranges_path=warc_ranges_path or "",
        warc_base_url=warc_base_url or "",
        stored=stored_warc_rows(session, existing, reread=str(warc_reread).lower() == "true"),
        workers=int(warc_workers) if str(warc_workers).strip().isdigit() else 1,
    )


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
