"""Exact Jaccard numerators of many pairs in bounded memory: a blocked merge of sorted shingle sets.

Exact scoring needs, per pair of anchors (low, high), the size of the intersection of their shingle
sets (each set its distinct 64-bit hashes in ascending unsigned order).  Joining every pair to both of
its sets in SQL puts one side's sets in a hash table and carries the other side's sets with every pair
row: about 10 KB per pair, which spilled tens of GB at 5M pages.  Here the pairs are processed in blocks
of their low documents instead:

1. the low documents, in key order, are cut into blocks whose sets take at most ``budget_bytes``
   (8 bytes per hash; a single larger set is a block of its own);
2. per block, its low documents' sets are read into one numpy array (the resident block), the block's
   pairs are sorted by high document, and the sets of the block's high documents are streamed from
   DuckDB in record batches; each streamed set is merged (``intersections``, compiled) with the
   resident sets of its pairs.

Memory is the resident block plus one streamed batch plus the block's pairs, whatever the corpus size;
the price is one scan of the shingle sets per block, restricted to keys from the block's first low
document (every high document sorts after its low one) to its last high one: sets stored in key order
with pairs between near keys (as anchor_scoring arranges them) are read about once in all.  The output,
one row per pair, is (low_doc_id, high_doc_id, low_shingle_count, high_shingle_count, shared_shingles),
block by block, each block's pairs ordered by (high_doc_id, low_doc_id).
webdedup/engines/anchor_scoring.py feeds it the candidate anchor pairs of int_anchor_intersections.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup.core.kernels import intersections
from webdedup.engines.duckdb_memory import lend

#: Output schema (string keys): the counts are int32 like int_fingerprints.shingle_count, shared is a BIGINT.
SCHEMA = pa.schema(
    [
        pa.field("low_doc_id", pa.string(), nullable=False),
        pa.field("high_doc_id", pa.string(), nullable=False),
        pa.field("low_shingle_count", pa.int32(), nullable=False),
        pa.field("high_shingle_count", pa.int32(), nullable=False),
        pa.field("shared_shingles", pa.int64(), nullable=False),
    ]
)
#: bytes per stored hash and a per-set allowance (offsets, doc_id) when sizing blocks
HASH_BYTES = 8
SET_OVERHEAD_BYTES = 64
STREAM_ROWS = 4096

_NAMES = itertools.count()


def detached(array: pa.Array) -> pa.Array:
    """A copy of ``array`` in buffers of its own.  Every column of a record batch DuckDB exports shares
    the batch's release callback, so keeping one column (a batch's doc_ids) keeps the whole batch alive,
    page bodies or shingle sets included: at 10M pages that was 7 GB of bodies behind 1.9M doc_ids."""
    return array.take(pa.array(np.arange(len(array), dtype=np.int64)))


def _sets(table) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(keys, values as uint64, int64 offsets) of a (key, shingle_set) table or batch."""
    doc_ids = table.column(0)
    lists = table.column(1)
    if isinstance(lists, pa.ChunkedArray):
        doc_ids, lists = doc_ids.combine_chunks(), lists.combine_chunks()
    if lists.null_count:
        raise ValueError(f"exact Jaccard: null shingle_set for {doc_ids.filter(lists.is_null())[0]}")
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    values = lists.values.to_numpy(zero_copy_only=False).view(np.uint64)
    return doc_ids, values, offsets


def _resident(connection, query: str, expected: int, key_type) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """``_sets`` of a block's sets, read from DuckDB in batches into one array of ``expected`` hashes (the
    sets' shingle_count summed), so that no fetched result is held beside it.  (Measured alone on 1M
    pages of real prose this did not lower the peak: DuckDB's cache did, see duckdb_memory.lend.)  More
    hashes than expected grow the array."""
    ids, values, offsets, used = [], np.empty(expected, dtype=np.uint64), [np.zeros(1, dtype=np.int64)], 0
    for batch in connection.sql(query).to_arrow_reader(STREAM_ROWS):
        batch_ids, batch_values, batch_offsets = _sets(batch)
        batch_values = batch_values[batch_offsets[0] : batch_offsets[-1]]
        if used + len(batch_values) > len(values):
            grown = np.empty(used + len(batch_values), dtype=np.uint64)
            grown[:used] = values[:used]
            values = grown
        values[used : used + len(batch_values)] = batch_values
        offsets.append(batch_offsets[1:] - batch_offsets[0] + used)
        ids.append(detached(batch_ids))
        used += len(batch_values)
    doc_ids = pa.concat_arrays(ids) if ids else pa.array([], key_type)
    return doc_ids, values[:used], np.concatenate(offsets)


def _positions(keys: pa.Array, value_set: pa.Array, what: str) -> np.ndarray:
    """Index of each key in value_set; a key that is missing is an error naming it."""
    found = pc.index_in(keys, value_set=value_set)
    if found.null_count:
        missing = keys.filter(found.is_null())[0]
        raise ValueError(f"exact Jaccard: no shingle set for the {what} document {missing}")
    return found.to_numpy(zero_copy_only=False).astype(np.int64)


def _literal(value) -> str:
    if isinstance(value, int):
        return str(value)
    return "'" + value.replace("'", "''") + "'"


def pair_intersections(
    connection, pairs_sql: str, sets_table: str, budget_bytes: int, carry=(), key="doc_id"
):
    """Yield record batches of ``output_schema(carry, key type)``: the intersection size of every distinct
    pair of ``pairs_sql`` (a query with columns low_doc_id, high_doc_id, low_doc_id <= high_doc_id) over
    the shingle sets of ``sets_table`` (a table, or a table function such as ``read_parquet(...)``,
    with ``key``, shingle_count, shingle_set; the pairs name
    its documents by ``key``, a string or an integer), in blocks of at most ``budget_bytes`` of resident
    sets, followed by the BIGINT columns ``carry`` of ``pairs_sql`` (functions of the pair), passed
    through.  The blocks follow ``key`` order, so a table stored in that order is read block by block.
    ``connection`` is a DuckDB connection of its own (its temporary tables are dropped when the stream
    ends)."""
    suffix = next(_NAMES)
    pairs_table, lows_table = f"webdedup_jaccard_pairs_{suffix}", f"webdedup_jaccard_lows_{suffix}"
    budget = max(int(budget_bytes), 1)
    connection.execute(f"""
        create or replace temp table {pairs_table} as
        select distinct {", ".join(("low_doc_id", "high_doc_id", *carry))} from ({pairs_sql}) as pairs
    """)
    # each low document's block: its set's running size in doc_id order, cut every `budget` bytes
    connection.execute(f"""
        create or replace temp table {lows_table} as
        with sized as (
            select lows.doc_id, sets.shingle_count * {HASH_BYTES} + {SET_OVERHEAD_BYTES} as size
            from (select distinct low_doc_id as doc_id from {pairs_table}) as lows
            left join {sets_table} as sets on lows.doc_id = sets.{key}
        ),
        running as (
            select doc_id, size, sum(size) over (order by doc_id rows unbounded preceding) as total
            from sized
        )
        select doc_id, cast((total - size) // {budget} as bigint) as block from running
    """)
    try:
        missing = connection.execute(
            f"select doc_id from {lows_table} where block is null limit 1"
        ).fetchall()
        if missing:
            raise ValueError(
                f"exact Jaccard: no shingle set for the low document {missing[0][0]} ({sets_table})"
            )
        blocks = connection.execute(f"""
            select block, min(doc_id), max(doc_id) from {lows_table} group by block order by block
        """).fetchall()
        # the resident block lives outside DuckDB: DuckDB's cache makes room for it (duckdb_memory.lend)
        with lend(connection, 2 * budget):
            for block, first, last in blocks:
                yield from _block(
                    connection, pairs_table, lows_table, (sets_table, key), (block, first, last), carry
                )
    finally:
        connection.execute(f"drop table if exists {pairs_table}; drop table if exists {lows_table}")


def _keys(column) -> pa.Array:
    """A key column of a fetched table as one array (strings as plain ``string``)."""
    keys = column.combine_chunks()
    return (
        keys.cast(pa.string())
        if pa.types.is_large_string(keys.type) or pa.types.is_string_view(keys.type)
        else keys
    )


def _block(connection, pairs_table, lows_table, sets, bounds, carry):
    sets_table, key = sets
    block, first, last = bounds
    in_block = f"between {_literal(first)} and {_literal(last)}"
    pairs = connection.sql(f"""
        select {", ".join(("low_doc_id", "high_doc_id", *carry))} from {pairs_table}
        where low_doc_id {in_block}
        order by high_doc_id, low_doc_id
    """).to_arrow_table()
    low_ids, high_ids = _keys(pairs.column("low_doc_id")), _keys(pairs.column("high_doc_id"))
    in_lows = f"""
        from {sets_table} as sets
        where sets.{key} {in_block}
            and sets.{key} in (select doc_id from {lows_table} where block = {int(block)})
    """
    expected = connection.sql(f"select coalesce(sum(sets.shingle_count), 0) {in_lows}").fetchall()[0][0]
    resident_ids, resident_values, resident_offsets = _resident(
        connection, f"select sets.{key}, sets.shingle_set {in_lows}", int(expected), low_ids.type
    )
    low_rows = _positions(low_ids, resident_ids, "low")
    left_starts, left_ends = resident_offsets[low_rows], resident_offsets[low_rows + 1]
    # pairs are sorted by high document: each distinct high document owns one run of pair rows
    n = len(pairs)
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = pc.not_equal(high_ids.slice(1), high_ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    run_starts = np.flatnonzero(change)
    run_ends = np.append(run_starts[1:], n)
    runs_table = f"{pairs_table}_runs"
    runs = pa.table({"doc_id": high_ids.take(pa.array(run_starts)), "run": np.arange(len(run_starts))})
    connection.register(f"{runs_table}_arrow", runs)
    connection.execute(f"create or replace temp table {runs_table} as select * from {runs_table}_arrow")
    connection.unregister(f"{runs_table}_arrow")
    shared = np.full(n, -1, dtype=np.int64)
    high_counts = np.zeros(n, dtype=np.int32)
    right_starts = np.zeros(n, dtype=np.int64)
    right_ends = np.zeros(n, dtype=np.int64)
    # the block's high documents' sets, each with its run of pairs: every high sorts from `first` on, and
    # up to the block's last high (its pairs are sorted by high), bounds that the sets' statistics prune by
    highs = f"between {_literal(first)} and {_literal(high_ids[n - 1].as_py())}"
    stream = connection.sql(f"""
        select runs.run, sets.shingle_set
        from {sets_table} as sets
        inner join {runs_table} as runs on sets.{key} = runs.doc_id
        where sets.{key} {highs}
    """).to_arrow_reader(STREAM_ROWS)
    for batch in stream:
        if batch.column(1).null_count:
            raise ValueError(f"exact Jaccard: a null shingle_set ({sets_table})")
        batch_runs = batch.column(0).to_numpy(zero_copy_only=False)
        lists = batch.column(1)
        batch_values = lists.values.to_numpy(zero_copy_only=False).view(np.uint64)
        batch_offsets = np.asarray(lists.offsets, dtype=np.int64)
        # the pair rows of every streamed set, and which streamed set each of those rows takes
        lengths = run_ends[batch_runs] - run_starts[batch_runs]
        owner = np.repeat(np.arange(len(batch_runs)), lengths)
        rows = np.arange(len(owner)) + np.repeat(
            run_starts[batch_runs] - (np.cumsum(lengths) - lengths), lengths
        )
        right_starts[rows] = batch_offsets[owner]
        right_ends[rows] = batch_offsets[owner + 1]
        high_counts[rows] = (batch_offsets[owner + 1] - batch_offsets[owner]).astype(np.int32)
        intersections(
            resident_values, left_starts, left_ends, batch_values, right_starts, right_ends, shared, rows
        )
    connection.execute(f"drop table if exists {runs_table}")
    if n and shared.min() < 0:
        missing = high_ids.filter(pa.array(shared < 0))[0]
        raise ValueError(f"exact Jaccard: no shingle set for the high document {missing} ({sets_table})")
    yield pa.RecordBatch.from_arrays(
        [
            low_ids,
            high_ids,
            pa.array((left_ends - left_starts).astype(np.int32)),
            pa.array(high_counts),
            pa.array(shared),
            *(pairs.column(name).combine_chunks().cast(pa.int64()) for name in carry),
        ],
        schema=output_schema(carry, low_ids.type),
    )


def output_schema(carry=(), key_type=None) -> pa.Schema:
    """``SCHEMA`` (its two keys of ``key_type``, default string) followed by the carried BIGINT columns."""
    key_type = key_type or pa.string()
    keys = [pa.field(name, key_type, nullable=False) for name in ("low_doc_id", "high_doc_id")]
    carried = [pa.field(name, pa.int64(), nullable=False) for name in carry]
    return pa.schema([*keys, *list(SCHEMA)[2:], *carried])
