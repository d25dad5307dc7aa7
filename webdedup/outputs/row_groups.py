"""Parquet files whose row groups do not depend on how DuckDB happens to chunk a query's rows.

DuckDB's ``COPY ... (row_group_size n)`` closes a row group at the first chunk boundary past n rows, and
a query's chunks follow the physical layout of the tables it scans.  A table filled by a parallel insert
(stg_documents) can be laid out differently by two builds of the same input, so the release, written in
the stored order without a sort, could differ in its row-group boundaries (same rows, same order,
different bytes) between reruns.  Here the query is read as Arrow record batches, cut again into batches
of exactly ``rows`` rows, and pyarrow's Parquet writer writes each as one row group: every row group but
the last holds ``rows`` rows, and its pages are cut the same way whatever the layout.

pyarrow writes, not DuckDB's COPY from the Arrow stream: that COPY keeps its order by buffering batches
inside DuckDB's memory pool (0.9 GB at 1M generated pages, 1.0-1.4 GB throughout the 10M release), where
the marts built beside the export ran out of the pool (docs/benchmarks.md, session 30).  pyarrow holds one
row group.  The query's rows are read on a thread of their own (``prefetched``), a few batches ahead of
the writer, so DuckDB runs the query while pyarrow compresses.  A query with a column of a type pyarrow
would not keep as DuckDB does (COPY_ONLY_TYPES: an extra input column the release carries, such as an
INTERVAL or a TIME WITH TIME ZONE) is still written by DuckDB's COPY from those batches.
"""

from __future__ import annotations

import queue
import re
import threading

import pyarrow as pa
import pyarrow.parquet as pq

from webdedup.engines.duckdb_memory import STREAM_LEND_BYTES, lend

#: Rows per Arrow batch read from DuckDB (its vector size), cut again into row groups by exact_batches.
#: Larger batches cost more kernel time (page faults of DuckDB's Arrow conversion): the release of 1.1M
#: generated pages faulted 1.5-1.6 M pages read as 10,000-row batches, 1.1-1.3 M as 2,048-row ones, with
#: the same bytes written (docs/benchmarks.md, session 26).
READ_ROWS = 2048
#: Batches of READ_ROWS rows the reading thread holds ready for the writer (a few MB each: the memory the
#: overlap costs).
PREFETCH_BATCHES = 8
#: The Parquet writer's settings.  Pages as large as a row group's column: zstd over pyarrow's default
#: 1 MiB pages left the 1M release 14% larger than DuckDB's COPY wrote it (2% with these); level 3 is
#: zstd's default.
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 3, "data_page_size": 64 << 20}
#: DuckDB types (named anywhere in a column's type, nested ones included) that pyarrow's writer cannot write
#: (INTERVAL, UNION) or does not keep as DuckDB's COPY does: from DuckDB's Arrow export UUID and JSON arrive
#: as text, TIME WITH TIME ZONE as TIME, BIT and BIGNUM as BLOB, HUGEINT as DECIMAL(38, 0) where COPY
#: writes DOUBLE.  A name in a struct's field ("bit") matches too: such a file is written by COPY, no harm.
COPY_ONLY_TYPES = re.compile(
    r"\b(INTERVAL|UNION|UUID|U?HUGEINT|TIME WITH TIME ZONE|BIT|BIGNUM|VARINT|JSON)\b"
)
_END = object()


def exact_batches(batches, rows: int):
    """The rows of ``batches`` (of any sizes: DuckDB's reader gives at most READ_ROWS, fewer where a query's
    chunks end with its scans') again, cut into record batches of exactly ``rows`` rows but the last."""
    pending: list[pa.RecordBatch] = []
    held = 0
    for batch in batches:
        pending.append(batch)
        held += batch.num_rows
        while held >= rows:
            table = pa.Table.from_batches(pending).combine_chunks()
            yield from table.slice(0, rows).to_batches()
            rest = table.slice(rows)
            pending, held = rest.to_batches(), rest.num_rows
    if held:
        yield from pa.Table.from_batches(pending).combine_chunks().to_batches()


def prefetched(batches, depth: int = PREFETCH_BATCHES):
    """The items of ``batches``, in order, iterated on a thread of its own at most ``depth`` items ahead.
    An exception of ``batches`` is raised here, where its item would have come; when the caller stops early
    (closes the generator), the thread stops at its next item."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in batches:
                if not offer(item):
                    return
            offer(_END)
        except BaseException as error:  # handed to the consumer, raised there
            offer(error)

    thread = threading.Thread(target=produce, name="webdedup-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


def write_in_row_groups(connection, query: str, path: str, rows: int) -> str:
    """Write the rows of ``query`` to the Parquet file ``path`` (zstd) in row groups of exactly ``rows``
    rows but the last; ``connection`` is the database's, read through cursors of its own.  Returns
    ``path``.  pyarrow writes them, unless a column's type is one of COPY_ONLY_TYPES (an extra input column
    of the release): then DuckDB's COPY writes the same batches, read with DuckDB's lossless Arrow types,
    so that every column keeps the type a COPY of the query gives it."""
    reader = connection.cursor()
    copy_only = any(COPY_ONLY_TYPES.search(str(column_type)) for column_type in reader.sql(query).types)
    if copy_only:
        reader.execute("set session arrow_lossless_conversion = true")
    source = reader.sql(query).to_arrow_reader(READ_ROWS)
    batches = exact_batches(prefetched(source), int(rows))
    if copy_only:
        return _copy_batches(
            connection, pa.RecordBatchReader.from_batches(source.schema, batches), path, rows
        )
    # the batches in flight, the row group being cut and compressed, and DuckDB's Arrow buffers for them
    # live outside DuckDB's buffer pool: its limit makes room for them while the file is written
    with (
        lend(connection, STREAM_LEND_BYTES),
        pq.ParquetWriter(path, source.schema, **PARQUET_OPTIONS) as writer,
    ):
        for batch in batches:
            writer.write_batch(batch, row_group_size=int(rows))
    return path


def _copy_batches(connection, reader: pa.RecordBatchReader, path: str, rows: int) -> str:
    """DuckDB's COPY of ``reader``'s batches (order kept: it buffers them in DuckDB's memory)."""
    writer = connection.cursor()
    writer.register("webdedup_row_groups", reader)
    try:
        quoted = path.replace("'", "''")
        writer.execute(
            f"copy (select * from webdedup_row_groups) to '{quoted}'"
            f" (format parquet, compression zstd, row_group_size {int(rows)})"
        )
    finally:
        writer.unregister("webdedup_row_groups")
    return path
