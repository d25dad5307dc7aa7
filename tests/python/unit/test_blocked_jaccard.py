"""The blocked merge of int_anchor_intersections (webdedup/engines/blocked_jaccard.py) against Python sets.

Intersection sizes are compared with ``len(set(a) & set(b))`` computed independently, for block budgets
from one set per block to everything in one block, with hashes spanning the whole unsigned 64-bit range
(stored as signed BIGINTs, sorted as unsigned, as the shingling stores them), keyed by doc_id strings
and by integer keys (webdedup/engines/anchor_scoring.py's ordinals).
"""

from __future__ import annotations

import random

import duckdb
import pyarrow as pa
import pytest

from webdedup.engines import blocked_jaccard


def _sorted_set(values: set[int]) -> list[int]:
    """Distinct 64-bit values in unsigned order, as signed BIGINTs (the shingling's layout)."""
    return [value - (1 << 64) if value >= 1 << 63 else value for value in sorted(values)]


def _corpus(rng: random.Random, documents: int) -> dict[str, set[int]]:
    pool = [rng.getrandbits(64) for _ in range(400)]
    sets: dict[str, set[int]] = {}
    for number in range(documents):
        size = rng.choice([0, 1, 3, 20, 60, 150])
        sets[f"doc-{number:04d}"] = set(rng.sample(pool, size))
    return sets


def _connection(sets: dict[str, set[int]]) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    table = pa.table(
        {
            "doc_id": list(sets),
            "shingle_count": pa.array([len(values) for values in sets.values()], pa.int32()),
            "shingle_set": pa.array([_sorted_set(values) for values in sets.values()], pa.list_(pa.int64())),
        }
    )
    connection.register("sets_arrow", table)
    connection.execute("create table shingle_sets as select * from sets_arrow")
    return connection


def _pairs(rng: random.Random, doc_ids: list[str], count: int) -> list[tuple[str, str]]:
    pairs = [tuple(sorted(rng.sample(doc_ids, 2))) for _ in range(count)]
    pairs += [(doc_id, doc_id) for doc_id in doc_ids[:5]]  # pairs inside an identical-set group
    return pairs + pairs[:7]  # repeated pairs are scored once


def _run(connection, pairs: list[tuple[str, str]], budget_bytes: int) -> pa.Table:
    connection.register(
        "pairs_arrow", pa.table({"low": [p[0] for p in pairs], "high": [p[1] for p in pairs]})
    )
    connection.execute("create or replace table pairs as select * from pairs_arrow")
    batches = blocked_jaccard.pair_intersections(
        connection.cursor(),
        "select low as low_doc_id, high as high_doc_id from pairs",
        "shingle_sets",
        budget_bytes,
    )
    return pa.Table.from_batches(list(batches), schema=blocked_jaccard.SCHEMA)


@pytest.mark.parametrize("budget_bytes", [1, 2_000, 50_000, 10**9])
def test_intersections_equal_python_sets_for_any_block_budget(budget_bytes):
    rng = random.Random(16)
    sets = _corpus(rng, 120)
    connection = _connection(sets)
    pairs = _pairs(rng, sorted(sets), 400)
    result = _run(connection, pairs, budget_bytes).to_pylist()
    assert len(result) == len(set(pairs))
    assert {(row["low_doc_id"], row["high_doc_id"]) for row in result} == set(pairs)
    for row in result:
        low, high = sets[row["low_doc_id"]], sets[row["high_doc_id"]]
        assert row["shared_shingles"] == len(low & high), row
        assert (row["low_shingle_count"], row["high_shingle_count"]) == (len(low), len(high))


def test_a_pair_without_a_shingle_set_is_an_error_naming_the_document():
    rng = random.Random(3)
    sets = _corpus(rng, 10)
    connection = _connection(sets)
    with pytest.raises(ValueError, match="doc-9999"):
        _run(connection, [("doc-0001", "doc-9999")], 10**9)
    with pytest.raises(ValueError, match="doc-0000x"):
        _run(connection, [("doc-0000x", "doc-0003")], 10**9)


def test_no_pairs_give_no_rows():
    connection = _connection({"a": {1, 2}})
    assert _run(connection, [], 10**9).num_rows == 0


def test_integer_keys_give_the_same_counts_as_doc_ids():
    rng = random.Random(5)
    sets = _corpus(rng, 60)
    names = sorted(sets)
    connection = _connection(sets)
    connection.execute(
        "create table keyed as select row_number() over (order by doc_id) - 1 as key, * from shingle_sets"
    )
    pairs = _pairs(rng, names, 150)
    index = {name: number for number, name in enumerate(names)}
    connection.register(
        "keyed_pairs_arrow",
        pa.table({"low": [index[p[0]] for p in pairs], "high": [index[p[1]] for p in pairs]}),
    )
    connection.execute("create table keyed_pairs as select * from keyed_pairs_arrow")
    batches = blocked_jaccard.pair_intersections(
        connection.cursor(),
        "select low as low_doc_id, high as high_doc_id from keyed_pairs",
        "keyed",
        2_000,
        key="key",
    )
    result = pa.Table.from_batches(list(batches), schema=blocked_jaccard.output_schema((), pa.int64()))
    assert result.num_rows == len(set(pairs))
    for row in result.to_pylist():
        low, high = sets[names[row["low_doc_id"]]], sets[names[row["high_doc_id"]]]
        assert row["shared_shingles"] == len(low & high), row


def test_a_detached_column_holds_no_buffer_of_its_batch():
    """A column kept from a DuckDB batch must not keep the batch's other columns (page bodies) alive."""
    connection = duckdb.connect()
    batch = next(
        iter(
            connection.sql(
                "select 'doc-' || range as doc_id, repeat('x', 100) as body from range(5)"
            ).to_arrow_reader(5)
        )
    )
    kept = blocked_jaccard.detached(batch.column(0))
    assert kept.to_pylist() == [f"doc-{number}" for number in range(5)]
    batch_buffers = {buffer.address for column in batch.columns for buffer in column.buffers() if buffer}
    assert not batch_buffers & {buffer.address for buffer in kept.buffers() if buffer}
