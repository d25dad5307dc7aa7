"""Read the configured WARC input as record batches: the function behind the stg_warc_records model.

Local files first (in worker processes when large and var warc_workers > 1), then byte ranges (fetched by
threads); units whose read_key an earlier build stored are reused instead of read again.  Logs the counts
per status and each error.
"""

from __future__ import annotations

import itertools
import mmap
import multiprocessing
import os
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

from webdedup.inputs.input_files import file_key, file_version
from webdedup.warc.framing import GZIP_MAGIC, iter_gzip_members, iter_warc_records
from webdedup.warc.ranges import iter_range_rows, read_ranges_table
from webdedup.warc.records import span_batch
from webdedup.warc.reuse import ReadUnit, StoredRows, extractor_version
from webdedup.warc.schema import SCHEMA, STATUSES, WarcInputError, error_row
from webdedup.warc.sources import files_not_read, list_warc_files, resolve_location

# With workers > 1 (var warc_workers), local files holding more than this many bytes to read are parsed by
# worker processes: FastWARC and Resiliparse hold the GIL, so threads would not help, and a spawned
# worker takes ~2 s to start inside dbt, which pays off above ~64 MB of WARC.  Each task is
# SPANS_PER_TASK records and comes back as one Arrow record batch.  Opt-in: a spawned worker imports
# the main script of the process (dbt's entry point is safe; a script that runs dbt programmatically
# must guard its code with ``if __name__ == "__main__"``).
PARALLEL_MIN_BYTES = 64 << 20
SPANS_PER_TASK = 200


def iter_file_batches(
    path: str, filename: str, read_key: str | None = None, pool: Executor | None = None, in_flight: int = 4
) -> Iterator[pa.RecordBatch]:
    """Record batches of every record of one local WARC file (gzip members or uncompressed records),
    in file order, SPANS_PER_TASK spans per batch.  With ``pool`` (worker processes) the batches are
    parsed and extracted there, at most ``in_flight`` at a time."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            error = {**error_row(filename, 0, 0, "empty file: no WARC record"), "read_key": read_key}
            yield pa.RecordBatch.from_pylist([error], schema=SCHEMA)
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            # gzip by name or content: a damaged first member must not turn the file into plain WARC
            gzipped = path.lower().endswith(".gz") or buffer[:2] == GZIP_MAGIC[:2]
            # gzip members come out of the framing decompressed: each is decompressed once
            spans = iter_gzip_members(buffer) if gzipped else iter_warc_records(buffer)
            tasks: deque = deque()
            while chunk := list(itertools.islice(spans, SPANS_PER_TASK)):
                if pool is None:
                    yield span_batch(filename, chunk, read_key)
                    continue
                tasks.append(pool.submit(span_batch, filename, chunk, read_key))
                while len(tasks) >= in_flight:
                    yield tasks.popleft().result()
            while tasks:
                yield tasks.popleft().result()


def iter_file_rows(path: str, filename: str) -> Iterator[dict]:
    """Rows of every record of one local WARC file, read in this process (read_key None)."""
    for batch in iter_file_batches(path, filename):
        yield from batch.to_pylist()


def read_units(warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "") -> list[ReadUnit]:
    """The units of the configured inputs: local files first (sorted), then the ranges table in order.
    Raises WarcInputError on bad settings (a missing file, a bad ranges table) before anything is read."""
    if not (warc_paths or warc_ranges_path):
        raise WarcInputError("set var warc_paths or warc_ranges_path")
    units = []
    extractor = f"extractor={extractor_version()}"
    if warc_paths:
        skipped = files_not_read(warc_paths)
        if skipped:
            shown = ", ".join(skipped[:5]) + (f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else "")
            _log(f"not read: {len(skipped)} file(s) of warc_paths '{warc_paths}' that are not WARC: {shown}")
        for path, filename in list_warc_files(warc_paths):
            key = f"{file_key(path)} {extractor}"
            units.append(ReadUnit(key, filename, path))
    if warc_ranges_path:
        base = warc_base_url or os.path.dirname(os.path.abspath(warc_ranges_path))
        for _, filename, offset, length in read_ranges_table(warc_ranges_path):
            location = resolve_location(filename, base)
            version = file_version(location) if os.path.isfile(location) else "remote"
            key = f"range {location} offset={offset} length={length} {version} {extractor}"
            units.append(ReadUnit(key, filename, location, offset, length))
    return units


def _log(message: str) -> None:
    print(f"[warc] {message}", flush=True)


def _worker_count(files: list[ReadUnit], workers: int) -> int:
    """How many worker processes read ``files``: ``workers`` when it is above 1 and the files hold more
    than PARALLEL_MIN_BYTES, else 0 (in-process)."""
    size = sum(os.path.getsize(unit.location) for unit in files)
    return workers if workers > 1 and size > PARALLEL_MIN_BYTES else 0


def iter_batches(units: list[ReadUnit], workers: int = 1, batch_rows: int = 1000):
    """Record batches of every row of ``units``, each row with its unit's read_key: local files (in
    worker processes when large), then byte ranges (fetched by threads)."""
    files = [unit for unit in units if unit.offset is None]
    count = _worker_count(files, workers)
    # spawn: dbt runs models on threads, and forking a threaded process is unsafe
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn")) if count else None
    try:
        for unit in files:
            yield from iter_file_batches(unit.location, unit.filename, unit.key, pool, 2 * count)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    ranges = [unit for unit in units if unit.offset is not None]
    pending = []
    for unit, rows in zip(ranges, iter_range_rows(ranges), strict=True):
        pending.extend({**row, "read_key": unit.key} for row in rows)
        if len(pending) >= batch_rows:
            yield pa.RecordBatch.from_pylist(pending, schema=SCHEMA)
            pending = []
    if pending:
        yield pa.RecordBatch.from_pylist(pending, schema=SCHEMA)


def read_warc_batches(
    warc_paths: str = "",
    warc_ranges_path: str = "",
    warc_base_url: str = "",
    batch_rows: int = 1000,
    stored: StoredRows | None = None,
    workers: int = 1,
) -> pa.RecordBatchReader:
    """The stg_warc_records table as a stream of record batches; logs counts per status and each error.
    Units whose read_key ``stored`` holds are not read again (unless reading them failed): their stored
    rows are passed on.
    ``workers``: processes for large local inputs (1: none; see PARALLEL_MIN_BYTES)."""
    units = read_units(warc_paths, warc_ranges_path, warc_base_url)  # fails fast on bad settings
    reused = ({unit.key for unit in units} & stored.keys) - stored.failed if stored else set()
    to_read = [unit for unit in units if unit.key not in reused]

    def batches() -> Iterable[pa.RecordBatch]:
        counts: Counter = Counter()
        reused_rows = 0
        if reused:
            for batch in stored.batches(sorted(reused)):
                batch = batch.select(SCHEMA.names).cast(SCHEMA)
                counts.update(batch.column("status").to_pylist())
                reused_rows += batch.num_rows
                yield batch
            _log(f"reused {reused_rows} record(s) of {len(reused)} file(s) or range(s) read by a past build")
        for batch in iter_batches(to_read, workers, batch_rows):
            statuses = batch.column("status").to_pylist()
            counts.update(statuses)
            if "error" in statuses:
                for row in batch.filter(pc.equal(batch.column("status"), "error")).to_pylist():
                    _log(
                        f"error in {row['warc_filename']} at offset {row['warc_record_offset']}: "
                        + row["detail"]
                    )
            yield batch
        total = sum(counts.values())
        _log(
            f"{total} record(s) ({total - reused_rows} read now from {len(to_read)} file(s) or range(s),"
            f" {reused_rows} reused): " + ", ".join(f"{status} {counts[status]}" for status in STATUSES)
        )

    return pa.RecordBatchReader.from_batches(SCHEMA, batches())


def read_warc_table(warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "") -> pa.Table:
    """All rows as one table (tests and small inputs)."""
    return read_warc_batches(warc_paths, warc_ranges_path, warc_base_url).read_all()
