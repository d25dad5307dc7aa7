"""Parquet row groups that do not depend on how a query's rows are chunked (webdedup/outputs/row_groups.py),
the release's writer: the same rows in the same order give the same bytes."""

from __future__ import annotations

import threading
import time

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from webdedup.engines import duckdb_memory as memory
from webdedup.outputs import row_groups
from webdedup.outputs.row_groups import exact_batches, prefetched, write_in_row_groups

# the same rows in the same order, chunked differently: a union cuts a chunk where its first branch ends,
# as a table laid out differently by a parallel insert does
ONE_SCAN = "select * from t where i % 3 <> 0"
TWO_SCANS = (
    "select * from (select * from t where i < 33333 and i % 3 <> 0)"
    " union all (select * from t where i >= 33333 and i % 3 <> 0)"
)


@pytest.fixture
def connection():
    connection = duckdb.connect()
    connection.execute(
        "create table t as select i, repeat(chr((65 + i % 26)::integer), (i % 50)::integer) as body"
        " from range(100000) as r(i)"
    )
    return connection


def _row_groups(path) -> list[int]:
    metadata = pq.ParquetFile(path).metadata
    return [metadata.row_group(index).num_rows for index in range(metadata.num_row_groups)]


def test_the_same_rows_chunked_differently_give_the_same_file(connection, tmp_path):
    for name, query in (("one", ONE_SCAN), ("two", TWO_SCANS)):
        connection.execute(
            f"copy ({query}) to '{tmp_path}/copy-{name}.parquet' (format parquet, row_group_size 10000)"
        )
        write_in_row_groups(connection, query, str(tmp_path / f"{name}.parquet"), 10000)
    # DuckDB's COPY cuts row groups where the chunks end: the premise of this writer
    assert _row_groups(tmp_path / "copy-one.parquet") != _row_groups(tmp_path / "copy-two.parquet")
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "two.parquet").read_bytes()
    assert _row_groups(tmp_path / "one.parquet") == [10000] * 6 + [6666]
    expected = connection.sql(f"{ONE_SCAN} order by i").fetchall()
    assert duckdb.sql(f"select * from '{tmp_path}/two.parquet'").fetchall() == expected  # rows and order kept


# one column each: the types the outputs hold, then extra input columns the release carries along
ORDINARY = {
    "bigint": "i::bigint",
    "integer": "i::integer",
    "ubigint": "(i * 2654435761)::ubigint",
    "double": "i / 7",
    "boolean": "i % 2 = 0",
    "timestamp": "timestamp '2024-02-29 23:59:59.123456' + to_seconds(i)",
    "timestamptz": "timestamptz '2024-01-01 00:00:00+02' + to_seconds(i)",
    "date": "date '2024-01-01' + i::integer",
    "text": "case when i % 5 = 0 then null else 'page ' || i || ' é' end",
    "decimal": "(i / 8)::decimal(18, 3)",
    "list": "[i, null, 3]",
    "struct": "{'a': i, 'b': 'x'}",
    "map": "map {'k': i}",
    "blob": "'\\xAA'::blob",
    "enum": "'a'::enum('a', 'b')",
    "time": "time '12:34:56'",
    "timestamp_ns": "timestamp_ns '2024-01-01 00:00:00.123456789'",
}
UNUSUAL = {
    "uuid": "uuid '12345678-1234-5678-1234-567812345678'",
    "json": "'{\"a\": 1}'::json",
    "interval": "to_days(i::integer)",
    "timetz": "'12:34:56+02'::timetz",
    "hugeint": "i::hugeint * 1000000000000",
    "bit": "'0101'::bit",
    "varint": "123::varint",
    "union": "union_value(num := 2)::union(num int, s varchar)",
    "struct_of_interval": "{'a': interval 2 day, 'b': i % 2 = 0}",
}


@pytest.mark.parametrize(
    "name, expression, writer",
    [(name, expression, "parquet-cpp-arrow") for name, expression in ORDINARY.items()]
    + [(name, expression, "DuckDB") for name, expression in UNUSUAL.items()],
)
def test_every_type_reads_back_as_duckdbs_copy_of_the_query(tmp_path, name, expression, writer):
    """pyarrow writes the types it keeps; the rest go through DuckDB's COPY: either way DuckDB reads the
    file back with the types and values of a plain COPY of the query, in row groups of exactly 10,000."""
    connection = duckdb.connect()
    query = f"select i, {expression} as c from range(25000) as r(i)"
    path = str(tmp_path / "written.parquet")
    write_in_row_groups(connection, query, path, 10000)
    connection.execute(f"copy ({query}) to '{tmp_path}/copy.parquet' (format parquet)")
    assert writer in pq.ParquetFile(path).metadata.created_by
    described = "select column_name, column_type from (describe select * from '{}')"
    assert (
        connection.sql(described.format(path)).fetchall()
        == connection.sql(described.format(f"{tmp_path}/copy.parquet")).fetchall()
    )
    assert (
        connection.sql(f"select * from '{path}'").fetchall()
        == connection.sql(f"select * from '{tmp_path}/copy.parquet'").fetchall()
    )
    assert _row_groups(path) == [10000, 10000, 5000]


def test_an_empty_query_writes_an_empty_file(connection, tmp_path):
    path = str(tmp_path / "empty.parquet")
    assert write_in_row_groups(connection, "select * from t where false", path, 10000) == path
    assert pq.read_table(path).num_rows == 0


@pytest.mark.parametrize("sizes", [[7, 3, 10, 1, 19], [25], [1] * 30, [10, 10, 5]])
def test_batches_are_cut_to_exactly_the_size_asked(sizes):
    start, batches = 0, []
    for size in sizes:
        batches.append(pa.record_batch({"i": list(range(start, start + size))}))
        start += size
    cut = list(exact_batches(batches, 10))
    assert [batch.num_rows for batch in cut] == [10] * (start // 10) + ([start % 10] if start % 10 else [])
    assert [value for batch in cut for value in batch.column(0).to_pylist()] == list(range(start))


def _prefetch_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "webdedup-prefetch"]


@pytest.mark.parametrize("depth", [1, 3, 100])
def test_prefetched_gives_every_item_in_order(depth):
    assert list(prefetched(iter(range(1000)), depth)) == list(range(1000))
    assert not _prefetch_threads()


def test_prefetched_raises_the_error_of_its_source_where_it_came():
    def failing():
        yield from (1, 2)
        raise ValueError("clusters must hold one row per doc_id")

    received = []
    with pytest.raises(ValueError, match="one row per doc_id"):
        for item in prefetched(failing(), 1):
            received.append(item)
    assert received == [1, 2]
    assert not _prefetch_threads()


def test_a_consumer_that_stops_early_stops_the_reading_thread():
    produced = []

    def endless():
        for number in range(10**9):
            produced.append(number)
            yield number

    items = prefetched(endless(), 2)
    assert [next(items) for _ in range(5)] == list(range(5))
    items.close()
    assert not _prefetch_threads()
    count = len(produced)
    time.sleep(0.2)
    assert len(produced) == count <= 5 + 2 + 2  # read at most depth (+ the one in hand) ahead, then stopped


def test_an_error_in_the_query_stops_the_copy_with_its_message(connection, tmp_path):
    query = "select i, case when i = 60000 then error('row 60000 is bad') else body end as body from t"
    with pytest.raises(OSError, match="row 60000 is bad"):  # pyarrow raises the reader's DuckDB error
        write_in_row_groups(connection, query, str(tmp_path / "bad.parquet"), 10000)
    assert not _prefetch_threads()


def test_a_copy_that_cannot_write_raises_and_stops_the_reading_thread(connection, tmp_path):
    with pytest.raises(OSError, match="missing"):
        write_in_row_groups(connection, "select * from t", str(tmp_path / "missing" / "x.parquet"), 10000)
    assert not _prefetch_threads()


def test_duckdbs_limit_makes_room_for_the_writers_buffers_while_it_writes(tmp_path, monkeypatch):
    """The batches in flight and the row group being compressed live outside DuckDB's buffer pool: while
    the file is written DuckDB's limit is lower by duckdb_memory.STREAM_LEND_BYTES, and restored after."""
    monkeypatch.setitem(memory._lent, "configured", "3000MB")
    monkeypatch.setitem(memory._lent, "bytes", 0)
    connection = duckdb.connect(config={"memory_limit": "3000MB"})
    connection.execute("create table t as select i from range(50000) as r(i)")

    def limit() -> int:
        return memory.size_bytes(
            connection.cursor().sql("select current_setting('memory_limit')").fetchall()[0][0]
        )

    seen = []
    cut = row_groups.exact_batches
    monkeypatch.setattr(
        row_groups,
        "exact_batches",
        lambda batches, rows: ((seen.append(limit()), b)[1] for b in cut(batches, rows)),
    )
    before = limit()
    write_in_row_groups(connection, "select * from t", str(tmp_path / "t.parquet"), 10000)
    assert len(seen) == 5
    assert all(abs(before - during - memory.STREAM_LEND_BYTES) < 0.1 * 2**30 for during in seen)
    assert limit() == before
