"""Exact Jaccard numerators of many pairs in bounded memory: a blocked merge of sorted shingle sets.

Exact scoring needs, per pair of anchors (low, high), the size of the intersection of their shingle
sets (int_shingle_sets: each set its distinct 64-bit hashes in ascending unsigned order).  Joining every
pair to both of its sets in SQL puts one side's sets in a hash table and carries the other side's sets
with every pair row: about 10 KB per pair, which spilled tens of GB at 5M pages.  Here the pairs are
processed in blocks of their low documents instead:

1. the low documents, in doc_id order, are cut into blocks whose sets take at most ``budget_bytes``
   (8 bytes per hash; a single larger set is a block of its own);
2. per block, its low documents' sets are read into one numpy array (the resident block), the block's
   pairs are sorted by high document, and the sets of the block's high documents are streamed from
   DuckDB in record batches; each streamed set is merged (``intersections``, compiled) with the
   resident sets of its pairs.

Memory is the resident block plus one streamed batch plus the block's pairs, whatever the corpus size;
the price is one scan of the shingle sets per block, restricted to doc_ids from the block's first low
document on (every high document sorts after its low one).  The output, one row per pair, is
(low_doc_id, high_doc_id, low_shingle_count, high_shingle_count, shared_shingles), block by block, each
block's pairs ordered by (high_doc_id, low_doc_id).
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup.core.kernels import intersections
from webdedup.engines.duckdb_memory import lend

#: Output schema: the counts are int32 like int_shingle_sets.shingle_count, shared is a BIGINT.
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


def _sets(table) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(doc_ids, values as uint64, int64 offsets) of a (doc_id, shingle_set) table or batch."""
    doc_ids = table.column(0)
    lists = table.column(1)
    if isinstance(lists, pa.ChunkedArray):
        doc_ids, lists = doc_ids.combine_chunks(), lists.combine_chunks()
    if lists.null_count:
        raise ValueError(
            f"int_shingle_sets: null shingle_set for doc_id {doc_ids.filter(lists.is_null())[0]}"
        )
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    values = lists.values.to_numpy(zero_copy_only=False).view(np.uint64)
    return doc_ids.cast(pa.string()), values, offsets


def _resident(connection, query: str, expected: int) -> tuple[pa.Array, np.ndarray, np.ndarray]:
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
        ids.append(batch_ids)
        used += len(batch_values)
    doc_ids = pa.concat_arrays(ids) if ids else pa.array([], pa.string())
    return doc_ids, values[:used], np.concatenate(offsets)


def _positions(keys: pa.Array, value_set: pa.Array, what: str) -> np.ndarray:
    """Index of each key in value_set; a key that is missing is an error naming it."""
    found = pc.index_in(keys, value_set=value_set)
    if found.null_count:
        missing = keys.filter(found.is_null())[0]
        raise ValueError(f"exact Jaccard: no shingle set for the {what} document {missing}")
    return found.to_numpy(zero_copy_only=False).astype(np.int64)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def pair_intersections(connection, pairs_sql: str, sets_table: str, budget_bytes: int, carry=()):
    """Yield record batches of ``output_schema(carry)``: the intersection size of every distinct pair of
    ``pairs_sql`` (a query with columns low_doc_id, high_doc_id, low_doc_id <= high_doc_id) over the
    shingle sets of ``sets_table`` (a table with doc_id, shingle_count, shingle_set), in blocks of at most
    ``budget_bytes`` of resident sets, followed by the BIGINT columns ``carry`` of ``pairs_sql`` (functions
    of the pair), passed through.  ``connection`` is a DuckDB connection of its own (its temporary
    tables are dropped when the stream ends)."""
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
            left join {sets_table} as sets on lows.doc_id = sets.doc_id
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
                    connection, pairs_table, lows_table, sets_table, (block, first, last), carry
                )
    finally:
        connection.execute(f"drop table if exists {pairs_table}; drop table if exists {lows_table}")


def _block(connection, pairs_table, lows_table, sets_table, bounds, carry):
    block, first, last = bounds
    in_block = f"between {_literal(first)} and {_literal(last)}"
    pairs = connection.sql(f"""
        select {", ".join(("low_doc_id", "high_doc_id", *carry))} from {pairs_table}
        where low_doc_id {in_block}
        order by high_doc_id, low_doc_id
    """).to_arrow_table()
    low_ids = pairs.column("low_doc_id").combine_chunks().cast(pa.string())
    high_ids = pairs.column("high_doc_id").combine_chunks().cast(pa.string())
    in_lows = f"""
        from {sets_table} as sets
        where sets.doc_id {in_block}
            and sets.doc_id in (select doc_id from {lows_table} where block = {int(block)})
    """
    expected = connection.sql(f"select coalesce(sum(sets.shingle_count), 0) {in_lows}").fetchall()[0][0]
    resident_ids, resident_values, resident_offsets = _resident(
        connection, f"select sets.doc_id, sets.shingle_set {in_lows}", int(expected)
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
    # the block's high documents' sets, each with its run of pairs (every high sorts from `first` on)
    stream = connection.sql(f"""
        select runs.run, sets.shingle_set
        from {sets_table} as sets
        inner join {runs_table} as runs on sets.doc_id = runs.doc_id
        where sets.doc_id >= {_literal(first)}
    """).to_arrow_reader(STREAM_ROWS)
    for batch in stream:
        if batch.column(1).null_count:
            raise ValueError("int_shingle_sets: a null shingle_set")
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
        schema=output_schema(carry),
    )


def output_schema(carry=()) -> pa.Schema:
    """``SCHEMA`` followed by the carried BIGINT columns."""
    return pa.schema([*SCHEMA, *(pa.field(name, pa.int64(), nullable=False) for name in carry)])


def _relation_name(relation) -> str:
    """The table a dbt-duckdb ``dbt.ref`` relation (``select * from <name>``) reads."""
    query = relation.sql_query().strip()
    prefix = "select * from "
    if not query.lower().startswith(prefix):
        raise ValueError(f"expected a dbt.ref relation, got {query[:80]!r}")
    return query[len(prefix) :]


def model_stream(session, anchor_pairs, shingle_sets, block_mb, existing=None) -> pa.RecordBatchReader:
    """int_anchor_intersections: the intersections of the pairs of ``anchor_pairs`` (int_anchor_pairs)
    that ``existing`` lacks (the stored table of an incremental build, whose pre-hook deleted the pairs
    no longer current), with both anchors' shingle set keys, as a stream read by a connection of its
    own (``session`` runs the model's ``create table`` while the stream is consumed)."""
    text = str(block_mb).strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"var jaccard_block_mb must be a positive integer (MB), got {block_mb!r}")
    pairs_sql = f"""
        select
            left_anchor_doc_id as low_doc_id,
            right_anchor_doc_id as high_doc_id,
            left_shingle_set_key as low_shingle_set_key,
            right_shingle_set_key as high_shingle_set_key
        from {_relation_name(anchor_pairs)} as pairs
    """
    if existing is not None:
        pairs_sql += f"""
        where not exists (
            select 1 from {existing} as stored
            where
                stored.low_doc_id = pairs.left_anchor_doc_id
                and stored.high_doc_id = pairs.right_anchor_doc_id
        )"""
    carry = ("low_shingle_set_key", "high_shingle_set_key")
    budget = int(text) * 1_000_000
    # The pairs are chosen on ``session``, which sees what the model's pre-hook deleted in its transaction
    # (a connection of its own would not), and streamed to the merge's connection.
    connection = session.cursor()
    connection.register("webdedup_pending_pairs", session.sql(pairs_sql).fetch_record_batch(STREAM_ROWS))
    pending = "select * from webdedup_pending_pairs"
    batches = pair_intersections(connection, pending, _relation_name(shingle_sets), budget, carry)
    return pa.RecordBatchReader.from_batches(output_schema(carry), batches)
