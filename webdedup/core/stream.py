"""Streaming driver of the fingerprint models: record batches in, fingerprints or shingle sets out.

``iter_batches`` applies a batch function of webdedup/core/fingerprint.py to a stream of record batches on
worker threads (the kernels release the GIL), in input order, with bounded memory; ``settings_from_row``
reads the run's settings from a row of the int_run_settings model (what dbt passes).
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup.core.fingerprint import (
    FINGERPRINT_SCHEMA,
    SHINGLE_SET_SCHEMA,
    FingerprintParams,
    fingerprint_batch,
    shingle_set_batch,
)

#: Body bytes one kernel call takes at most: a batch of long pages (2,048 pages of 500 KB are 1 GB of text,
#: and the kernels' token and shingle arrays several times that) is cut into slices of about this much
#: text, so memory follows the pages in flight, not the length of a page.  Batches of ordinary pages
#: (2,048 pages of 3-10 KB) are far below it and are not cut.
MAX_BATCH_BYTES = 32 << 20


@dataclass(frozen=True)
class RunSettings:
    params: FingerprintParams
    batch_size: int
    workers: int
    progress_every: int = 100_000
    max_batch_bytes: int = MAX_BATCH_BYTES


def settings_from_row(row: dict) -> RunSettings:
    """RunSettings from a row of the int_run_settings model."""
    params = FingerprintParams.from_strings(
        shingle_size=row["shingle_size"],
        num_hashes=row["num_hashes"],
        rows_per_band=row["rows_per_band"],
        seed=row["seed"],
    )
    return RunSettings(
        params=params, batch_size=int(row["batch_size"]), workers=int(row["fingerprint_workers"])
    )


def _log(label: str, message: str) -> None:
    print(f"[{label}] {message}", flush=True)


def carry_columns(result: pa.RecordBatch, source: pa.RecordBatch, names) -> pa.RecordBatch:
    """``result`` (one row per row of ``source``) with the ``source`` columns ``names`` appended."""
    for name in names:
        result = result.append_column(source.schema.field(name), source.column(name))
    return result


def byte_bounded(batches, max_bytes: int):
    """Each record batch of ``batches`` as consecutive slices of whole rows (no copy), each holding at most
    ``max_bytes`` of column ``body`` (a row longer than that is a slice of its own); a batch within the
    bound, or without a body column, passes unchanged."""
    for batch in batches:
        if "body" not in batch.schema.names or batch.num_rows < 2:
            yield batch
            continue
        lengths = pc.fill_null(pc.binary_length(batch.column("body")), 0).to_numpy(zero_copy_only=False)
        ends = np.cumsum(lengths, dtype=np.int64)
        if ends[-1] <= max_bytes:
            yield batch
            continue
        start = 0
        while start < batch.num_rows:
            before = ends[start - 1] if start else 0
            stop = max(int(np.searchsorted(ends, before + max_bytes, side="right")), start + 1)
            yield batch.slice(start, stop - start)
            start = stop


def iter_batches(batches, settings: RunSettings, function=None, label: str = "fingerprints", carry=()):
    """Apply ``function(batch, settings.params)`` (default ``fingerprint_batch``) to an iterable of record
    batches (doc_id, body, ...), yielding the results in input order, each with the input columns named
    in ``carry`` appended unchanged.

    With ``settings.workers > 1`` batches go to that many worker threads (the kernels in
    ``webdedup.core.kernels`` release the GIL, so threads run them in parallel without the start-up and
    copying costs of processes); at most ``2 * workers`` batches are in flight, so memory is bounded by
    the batch size, not by the corpus; a batch of long pages is cut into slices of at most
    ``settings.max_batch_bytes`` of body first (``byte_bounded``).  Progress (documents done, docs/s) is
    printed every ``progress_every`` documents.
    """
    function = function or fingerprint_batch
    started = time.monotonic()
    done = 0
    next_report = settings.progress_every

    def finish(result: pa.RecordBatch, source: pa.RecordBatch) -> pa.RecordBatch:
        nonlocal done, next_report
        result = carry_columns(result, source, carry)
        done += result.num_rows
        if done >= next_report:
            elapsed = time.monotonic() - started
            _log(label, f"{done:,} documents, {done / max(elapsed, 1e-9):,.0f} docs/s")
            next_report += settings.progress_every
        return result

    batches = byte_bounded(batches, settings.max_batch_bytes)
    if settings.workers <= 1:
        for batch in batches:
            yield finish(function(batch, settings.params), batch)
    else:
        pool = ThreadPoolExecutor(settings.workers, thread_name_prefix="webdedup")
        pending: deque = deque()
        try:
            for batch in batches:
                pending.append((pool.submit(function, batch, settings.params), batch))
                while len(pending) >= 2 * settings.workers:
                    future, source = pending.popleft()
                    yield finish(future.result(), source)
            while pending:
                future, source = pending.popleft()
                yield finish(future.result(), source)
        finally:
            for future, _ in pending:  # a failed or abandoned stream leaves no work behind
                future.cancel()
            pool.shutdown(wait=False)
    elapsed = time.monotonic() - started
    _log(label, f"done: {done:,} documents in {elapsed:.1f} s ({done / max(elapsed, 1e-9):,.0f} docs/s)")


def _stream(reader: pa.RecordBatchReader, settings: RunSettings, function, schema: pa.Schema, label: str):
    carry = [name for name in reader.schema.names if name not in ("doc_id", "body")]
    for name in carry:
        schema = schema.append(reader.schema.field(name))
    return pa.RecordBatchReader.from_batches(schema, iter_batches(reader, settings, function, label, carry))


def stream_fingerprints(reader: pa.RecordBatchReader, settings: RunSettings) -> pa.RecordBatchReader:
    """Fingerprints (FINGERPRINT_SCHEMA) of a stream of (doc_id, body, ...) batches, as a stream; input
    columns other than doc_id and body (for example body_hash) are carried along unchanged."""
    return _stream(reader, settings, fingerprint_batch, FINGERPRINT_SCHEMA, "fingerprints")


def stream_shingle_sets(reader: pa.RecordBatchReader, settings: RunSettings) -> pa.RecordBatchReader:
    """Shingle sets (SHINGLE_SET_SCHEMA) of a stream of (doc_id, body, ...) batches, as a stream."""
    return _stream(reader, settings, shingle_set_batch, SHINGLE_SET_SCHEMA, "shingle sets")
