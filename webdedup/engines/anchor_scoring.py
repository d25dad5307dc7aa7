"""int_anchor_intersections on DuckDB: the shared shingles of the anchor pairs a build lacks, with the
anchors' shingle sets held only while they are counted.

A shingle set is 8 bytes per distinct shingle (about 5 KB per web page) of random hashes that no
compression shrinks: stored for every candidate anchor, the sets were the largest table of a build
(10.6 GB of a 28.5 GB database at 10M generated pages, more on corpora with more duplicates).  So they
live in a scratch file in DuckDB's temp_directory for the duration of this model only, their hashes one
after another as uint64 and nothing else (the keys' places in it are kept in memory):

1. the pairs to count: int_anchor_pairs minus those the stored table holds (all of them on a full build);
2. each anchor gets an ordinal key in an order that puts near-duplicates together (``_keyed_anchors``),
   cut into partitions of about var jaccard_block_mb of sets;
3. the anchors' texts (int_shingle_texts) are read in stored order, shingled by the code int_fingerprints
   uses (webdedup/core/stream.py, webdedup/core/fingerprint.py) and written to the scratch file
   partition by partition at each flush, in gathered writes straight from the shingled batches (no copy
   in between; webdedup/engines/scratch_sets.py): neither the bodies nor the sets are sorted, and memory
   holds the batches in flight plus at most half the budget of sets waiting to be written;
4. the file is memory-mapped (no copy, no decoding) and the pairs are counted in the order DuckDB sorts
   them into, a chunk at a time (PAIR_CHUNK_ROWS): those within each partition, then the few across
   partitions, so the pages of about one partition of sets are in use at a time (the mapped pages are
   handed back as the pairs move on to the next partition: mapped, they count in the build's RSS); each
   pair is one compiled merge of two sorted sets (webdedup/core/kernels.py ``intersections``), a
   partition's pairs shared among the fingerprint workers' threads (``merge_rows``).  Reading
   the sets back through DuckDB from a Parquet scratch file took 4.4 of the model's 10.6 s at 1M generated
   pages, the mapped merge 0.4 s (docs/benchmarks.md, session 21);
5. the keys are mapped back to doc_ids, each pair oriented as int_anchor_pairs orients it
   (low_doc_id < high_doc_id); the scratch file is deleted when the stream ends or fails.

An incremental build shingles only the anchors of its new pairs (an old anchor paired with a new page is
shingled again), so its cost follows the batch, not the corpus.  The other pairs exact scoring needs
(members to their representative, clustering: strict) are counted the same way by ``pair_intersections``
(SQL function webdedup_pair_intersections, macro exact_jaccard).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import webdedup.engines.scratch_sets as scratch_sets
from webdedup.core.kernels import intersections
from webdedup.core.stream import settings_from_row
from webdedup.engines.duckdb_memory import lend

#: One row per pair of int_anchor_intersections (low_doc_id < high_doc_id): both set sizes (int32 like
#: int_fingerprints.shingle_count), the size of their intersection, and the pair's two set keys.
SCHEMA = pa.schema(
    [
        pa.field("low_doc_id", pa.string(), nullable=False),
        pa.field("high_doc_id", pa.string(), nullable=False),
        pa.field("low_shingle_count", pa.int32(), nullable=False),
        pa.field("high_shingle_count", pa.int32(), nullable=False),
        pa.field("shared_shingles", pa.int64(), nullable=False),
        pa.field("low_shingle_set_key", pa.int64(), nullable=False),
        pa.field("high_shingle_set_key", pa.int64(), nullable=False),
    ]
)
#: bytes per stored hash and a per-set allowance (key, offsets) when sizing partitions
HASH_BYTES = 8
SET_OVERHEAD_BYTES = 64
#: rows per batch of the pairs streamed between connections
STREAM_ROWS = 4096
#: pairs counted per chunk (keys, flags and counts: about 60 bytes a pair while it is counted)
PAIR_CHUNK_ROWS = 1 << 20
#: pairs below which a partition's merge runs on one thread (splitting costs more than it saves)
PARALLEL_MERGE_ROWS = 1 << 14


def block_budget(block_mb) -> int:
    """Var jaccard_block_mb in bytes; anything but a positive whole number of MB is an error naming it."""
    text = str(block_mb).strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"var jaccard_block_mb must be a positive integer (MB), got {block_mb!r}")
    return int(text) * 1_000_000


def relation_name(relation) -> str:
    """The table a dbt-duckdb ``dbt.ref`` relation (``select * from <name>``) reads."""
    query = relation.sql_query().strip()
    prefix = "select * from "
    if not query.lower().startswith(prefix):
        raise ValueError(f"expected a dbt.ref relation, got {query[:80]!r}")
    return query[len(prefix) :]


def model_stream(
    session, anchor_pairs, documents, groups, settings, block_mb, existing=None
) -> pa.RecordBatchReader:
    """int_anchor_intersections: the pairs of ``anchor_pairs`` (int_anchor_pairs) that ``existing`` lacks
    (the stored table of an incremental build, whose pre-hook deleted the pairs no longer current),
    counted over the shingle sets of their anchors' texts in ``documents`` (int_shingle_texts) with the
    settings of ``settings`` (int_run_settings); ``groups`` (int_shingle_set_groups) gives each anchor's
    shingle_count, which sizes the scratch file's partitions.  A stream (``session`` runs the model's
    ``create table`` while it is consumed)."""
    budget = block_budget(block_mb)
    run = settings_from_row(settings.to_arrow_table().to_pylist()[0])
    pairs_sql = f"""
        select left_anchor_doc_id, right_anchor_doc_id, left_shingle_set_key, right_shingle_set_key
        from {relation_name(anchor_pairs)} as pairs
    """
    if existing is not None:
        pairs_sql += f"""
        where not exists (
            select 1 from {existing} as stored
            where
                stored.low_doc_id = pairs.left_anchor_doc_id
                and stored.high_doc_id = pairs.right_anchor_doc_id
        )"""
    # The pairs are chosen on ``session``, which sees what the model's pre-hook deleted in its transaction
    # (a connection of its own would not), and streamed to the merge's connection.
    connection = session.cursor()
    connection.register("webdedup_pending_pairs", session.sql(pairs_sql).to_arrow_reader(STREAM_ROWS))
    tables = (relation_name(documents), relation_name(groups))
    return pa.RecordBatchReader.from_batches(SCHEMA, _counted(connection, tables, run, budget))


def pair_intersections(connection, pairs, documents: str, groups: str, settings: str, block_mb) -> list:
    """exact_jaccard's counts on DuckDB: ``pairs`` (a list of {low_doc_id, high_doc_id}, as the SQL
    function webdedup_pair_intersections receives them) counted over their documents' texts in ``documents``
    (int_shingle_texts) as int_anchor_intersections counts, ``groups`` (int_shingle_set_groups) sizing the
    partitions, ``settings`` (int_run_settings) giving the shingle settings: about ``block_mb`` of sets in
    memory, however many pairs or long pages (as lists in a query, the sets of 18,599 pages of 60 KB took
    more than DuckDB's 2.7 GB).  One dict per distinct pair: low_doc_id, high_doc_id, both_counts (both set
    sizes added), shared_shingles.  ``connection`` is the build's database; tables are read as committed."""
    budget = block_budget(block_mb)
    pairs = pairs or ()
    pending = pa.table(
        {
            "left_anchor_doc_id": pa.array([pair["low_doc_id"] for pair in pairs], pa.string()),
            "right_anchor_doc_id": pa.array([pair["high_doc_id"] for pair in pairs], pa.string()),
            "left_shingle_set_key": pa.array(np.zeros(len(pairs), dtype=np.int64)),
            "right_shingle_set_key": pa.array(np.zeros(len(pairs), dtype=np.int64)),
        }
    )
    counter = connection.cursor()
    try:
        run = settings_from_row(counter.sql(f"select * from {settings}").to_arrow_table().to_pylist()[0])
        counter.register("webdedup_pending_pairs", pending)
        return [
            {
                "low_doc_id": row["low_doc_id"],
                "high_doc_id": row["high_doc_id"],
                "both_counts": row["low_shingle_count"] + row["high_shingle_count"],
                "shared_shingles": row["shared_shingles"],
            }
            for batch in _counted(counter, (documents, groups), run, budget)
            for row in batch.to_pylist()
        ]
    finally:
        counter.close()


def _counted(connection, tables: tuple[str, str], run, budget: int):
    documents, groups = tables
    suffix = uuid.uuid4().hex[:12]
    pairs, anchors = f"webdedup_anchor_pairs_{suffix}", f"webdedup_anchor_keys_{suffix}"
    connection.execute(f"create temp table {pairs} as select distinct * from webdedup_pending_pairs")
    connection.unregister("webdedup_pending_pairs")
    folder = connection.execute("select current_setting('temp_directory')").fetchall()[0][0] or "."
    path = os.path.join(folder, f"webdedup_shingle_sets_{suffix}.bin")
    try:
        if not connection.execute(f"select count(*) from {pairs}").fetchall()[0][0]:
            return
        os.makedirs(folder, exist_ok=True)
        connection.execute(f"create temp table {anchors} as {_keyed_anchors(pairs, groups, budget)}")
        keys = connection.execute(f"select count(*) from {anchors}").fetchall()[0][0]
        texts = _texts_sql(documents, anchors)
        ranges = scratch_sets.write_sets(connection, texts, path, run, (budget, keys))
        # the mapped partition's pages count as this process's memory: DuckDB's cache makes room for them
        with lend(connection, budget):
            yield from _counted_pairs(connection, (pairs, anchors), path, ranges, run.workers)
    finally:
        connection.execute(f"drop table if exists {pairs}; drop table if exists {anchors}")
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def _keyed_anchors(pairs: str, groups: str, budget: int) -> str:
    """Every anchor of ``pairs`` with its scratch key and partition.  Anchors are ordered by a label that
    near-duplicates share (the smallest doc_id within two pair hops: a cluster's pairs mostly join its
    members to one another), so a pair's two keys are usually close; the order is cut into partitions of
    about ``budget`` bytes of sets (shingle_count from ``groups``), the unit the scratch file's row
    groups and the merge's blocks follow."""
    return f"""
        with ends as (
            select left_anchor_doc_id as doc_id, right_anchor_doc_id as neighbour from {pairs}
            union all
            select right_anchor_doc_id, left_anchor_doc_id from {pairs}
            union all
            select left_anchor_doc_id, left_anchor_doc_id from {pairs}
        ),
        first_hop as (
            select doc_id, min(neighbour) as label from ends group by doc_id
        ),
        second_hop as (
            select ends.doc_id, min(first_hop.label) as label
            from ends inner join first_hop on ends.neighbour = first_hop.doc_id
            group by ends.doc_id
        ),
        sized as (
            select
                second_hop.doc_id,
                second_hop.label,
                coalesce(groups.shingle_count, 0) * {HASH_BYTES} + {SET_OVERHEAD_BYTES} as size
            from second_hop left join {groups} as groups on second_hop.doc_id = groups.doc_id
        ),
        ordered as (
            select
                doc_id,
                size,
                row_number() over (order by label, doc_id) - 1 as key,
                sum(size) over (order by label, doc_id rows unbounded preceding) as total
            from sized
        )
        select doc_id, key, cast((total - size) // {budget} as bigint) as part from ordered
    """


def _texts_sql(documents: str, anchors: str) -> str:
    """The anchors' texts in stored order, each with its key and partition."""
    return f"""
        select texts.doc_id, texts.body, anchors.key, anchors.part
        from {documents} as texts inner join {anchors} as anchors on texts.doc_id = anchors.doc_id
    """


def _counted_pairs(connection, tables: tuple[str, str], path: str, ranges, workers: int = 1):
    """Every pair of ``pairs`` counted over the scratch file's sets (memory-mapped: the pages of the sets
    in use are resident, and a partition's sets lie together), as batches of SCHEMA: first the pairs
    within each partition, then the few across partitions.  The pairs arrive from DuckDB in that order,
    PAIR_CHUNK_ROWS at a time, so memory holds one chunk of them, however many there are.  Each
    partition's merges are shared among ``workers`` threads (``merge_rows``)."""
    pairs, anchors = tables
    starts, ends = ranges
    keyed_anchors = connection.sql(f"select doc_id, part from {anchors} order by key").to_arrow_table()
    doc_ids = keyed_anchors.column("doc_id").combine_chunks().cast(pa.string())
    key_parts = keyed_anchors.column("part").to_numpy()
    if (starts < 0).any():
        missing = pc.min(doc_ids.filter(pa.array(starts < 0))).as_py()
        raise ValueError(f"exact Jaccard: no text for the anchor document {missing} (int_shingle_texts)")
    # a key's partition grows with the key, so the low key's partition is the lower one
    keyed = connection.sql(f"""
        select
            least(l.key, r.key) as low_key,
            greatest(l.key, r.key) as high_key,
            l.key > r.key as swapped,
            p.left_shingle_set_key,
            p.right_shingle_set_key
        from {pairs} as p
        inner join {anchors} as l on p.left_anchor_doc_id = l.doc_id
        inner join {anchors} as r on p.right_anchor_doc_id = r.doc_id
        order by l.part <> r.part, least(l.part, r.part), greatest(l.part, r.part), low_key, high_key
    """).to_arrow_reader(PAIR_CHUNK_ROWS)
    values, mapping = scratch_sets.mapped(path)
    executor = ThreadPoolExecutor(workers, thread_name_prefix="webdedup-merge") if workers > 1 else None
    pool = (executor, workers) if executor is not None else None
    counted = np.zeros(2, dtype=np.int64)  # pairs within, across
    try:
        yield from _counted_chunks(
            keyed, key_parts, (values, mapping, starts, ends), doc_ids, (counted, pool)
        )
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
    print(
        f"[exact jaccard] {int(counted[0]):,} pairs within and {int(counted[1]):,} across "
        f"{int(key_parts.max()) + 1 if len(key_parts) else 0:,} partition(s)",
        flush=True,
    )


def _counted_chunks(keyed, key_parts, sets, doc_ids, state):
    """``_counted_pairs``' loop: each chunk of keyed pairs counted, as a batch of SCHEMA."""
    values, mapping, starts, ends = sets
    counted, pool = state
    current = -1  # the high partition of the pairs merged last
    for chunk in keyed:
        if not chunk.num_rows:
            continue
        low, high = chunk.column("low_key").to_numpy(), chunk.column("high_key").to_numpy()
        high_parts = key_parts[high]
        counted += np.bincount(key_parts[low] != high_parts, minlength=2)
        shared = np.zeros(len(low), dtype=np.int64)
        low_starts, low_ends, high_starts, high_ends = starts[low], ends[low], starts[high], ends[high]
        # A chunk holds the pairs of several partitions: each run of one high partition is merged alone,
        # the pages of the one before handed back first, so the pages in use are those of one partition
        # (and, for a pair across partitions, its low one), not those of every partition in the chunk.
        for rows in partition_runs(high_parts):
            part = int(high_parts[rows[0]])
            if part != current:
                if current >= 0:
                    scratch_sets.release(mapping)
                current = part
            merge_rows((values, low_starts, low_ends, values, high_starts, high_ends, shared), rows, pool)
        counts = (low_ends - low_starts, high_ends - high_starts, shared)
        yield _by_doc_id(pa.Table.from_batches([chunk]), counts, doc_ids)


def merge_rows(
    arguments: tuple, rows: np.ndarray, pool: tuple[ThreadPoolExecutor, int] | None = None
) -> None:
    """``intersections(*arguments, rows)``: each row's count written to the output array of
    ``arguments``; with a ``pool`` (an executor and its number of threads) and at least
    PARALLEL_MERGE_ROWS rows, as one consecutive slice of the rows per thread, at once (the kernel
    releases the GIL; each row is written by exactly one slice)."""
    if pool is None or len(rows) < PARALLEL_MERGE_ROWS:
        intersections(*arguments, rows)
        return
    executor, threads = pool
    futures = [executor.submit(intersections, *arguments, part) for part in np.array_split(rows, threads)]
    for future in futures:
        future.result()


def partition_runs(parts: np.ndarray) -> list[np.ndarray]:
    """The positions of ``parts``, cut into runs of one value each (in order): ``[5, 5, 6, 5]`` gives
    ``[0, 1], [2], [3]``."""
    cuts = np.flatnonzero(parts[1:] != parts[:-1]) + 1
    return np.split(np.arange(len(parts)), cuts)


def _by_doc_id(pairs: pa.Table, counts, doc_ids: pa.Array) -> pa.RecordBatch:
    """Counted pairs over keys as a batch of SCHEMA: doc_ids, each pair oriented as int_anchor_pairs."""
    column = {name: pairs.column(name).combine_chunks() for name in pairs.column_names}
    low_counts, high_counts, shared = (pa.array(values) for values in counts)
    low_counts, high_counts = low_counts.cast(pa.int32()), high_counts.cast(pa.int32())
    low_ids, high_ids = doc_ids.take(column["low_key"]), doc_ids.take(column["high_key"])
    # a pair whose left anchor got the higher key: its key order is the reverse of its doc_id order
    swapped = column["swapped"]
    return pa.RecordBatch.from_arrays(
        [
            pc.if_else(swapped, high_ids, low_ids),
            pc.if_else(swapped, low_ids, high_ids),
            pc.if_else(swapped, high_counts, low_counts),
            pc.if_else(swapped, low_counts, high_counts),
            shared,
            column["left_shingle_set_key"].cast(pa.int64()),
            column["right_shingle_set_key"].cast(pa.int64()),
        ],
        schema=SCHEMA,
    )
