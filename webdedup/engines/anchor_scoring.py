"""int_anchor_intersections on DuckDB: the shared shingles of the anchor pairs a build lacks, with the
anchors' shingle sets held only while they are counted.

A shingle set is 8 bytes per distinct shingle (about 5 KB per web page) of random hashes that no
compression shrinks: stored for every candidate anchor, the sets were the largest table of a build
(10.6 GB of a 28.5 GB database at 10M generated pages, more on corpora with more duplicates).  So they
live in a scratch Parquet file in DuckDB's temp_directory for the duration of this model only:

1. the pairs to count: int_anchor_pairs minus those the stored table holds (all of them on a full build);
2. each anchor gets an ordinal key in an order that puts near-duplicates together (``_keyed_anchors``),
   cut into partitions of about var jaccard_block_mb of sets;
3. the anchors' texts (int_shingle_texts) are read in stored order, shingled by the code int_fingerprints
   uses (webdedup/core/stream.py, webdedup/core/fingerprint.py) and written to the scratch file by
   pyarrow, each row group holding one partition: neither the bodies nor the sets are sorted, and memory
   holds the batches in flight plus at most half the budget of sets waiting for their row group;
4. the blocked merge (webdedup/engines/blocked_jaccard.py) counts the pairs within a partition, then the
   few across partitions; the row groups' key statistics let a block read little more than its own
   partition, so the sets are read about once (in text order they were read once per block: at 10M
   generated pages this model took 244 s then, 172 s now; docs/benchmarks.md, session 19);
5. the keys are mapped back to doc_ids, each pair oriented as int_anchor_pairs orients it
   (low_doc_id < high_doc_id); the scratch file is deleted when the stream ends or fails.

An incremental build shingles only the anchors of its new pairs (an old anchor paired with a new page is
shingled again), so its cost follows the batch, not the corpus.  The few other pairs exact scoring needs
(cluster_inspection's member-to-representative pairs, clustering: strict, the audit) are scored from sets
computed as they are read (macro shingle_sets_source).
"""

from __future__ import annotations

import contextlib
import os
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from webdedup.core.fingerprint import SHINGLE_SET_SCHEMA
from webdedup.core.stream import settings_from_row, stream_shingle_sets
from webdedup.engines.blocked_jaccard import (
    HASH_BYTES,
    SET_OVERHEAD_BYTES,
    STREAM_ROWS,
    output_schema,
    pair_intersections,
)

#: One row per pair of int_anchor_intersections: the merge's columns, then the pair's two set keys.
SCHEMA = output_schema(("low_shingle_set_key", "high_shingle_set_key"))
#: The scratch sets: an ordinal key (storage order), then SHINGLE_SET_SCHEMA.
SCRATCH_SCHEMA = pa.schema([pa.field("key", pa.int64(), nullable=False), *SHINGLE_SET_SCHEMA])


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


def _counted(connection, tables: tuple[str, str], run, budget: int):
    documents, groups = tables
    suffix = uuid.uuid4().hex[:12]
    pairs, anchors = f"webdedup_anchor_pairs_{suffix}", f"webdedup_anchor_keys_{suffix}"
    connection.execute(f"create temp table {pairs} as select distinct * from webdedup_pending_pairs")
    connection.unregister("webdedup_pending_pairs")
    folder = connection.execute("select current_setting('temp_directory')").fetchall()[0][0] or "."
    path = os.path.join(folder, f"webdedup_shingle_sets_{suffix}.parquet")
    try:
        if not connection.execute(f"select count(*) from {pairs}").fetchall()[0][0]:
            return
        os.makedirs(folder, exist_ok=True)
        connection.execute(f"create temp table {anchors} as {_keyed_anchors(pairs, groups, budget)}")
        _write_sets(connection, _texts_sql(documents, anchors), path, run, budget)
        sets = "read_parquet('{}')".format(path.replace("'", "''"))
        yield from _oriented(connection, (pairs, anchors), sets, budget)
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


def _write_sets(connection, texts_sql: str, path: str, run, budget: int) -> None:
    """Shingle the texts of ``texts_sql`` into the Parquet file ``path`` (SCRATCH_SCHEMA).  Shingled sets
    wait in memory by partition (at most half the budget) and are written one row group per partition,
    so each row group's keys lie within one partition and the key statistics let a merge block read
    only the row groups of the keys it needs."""
    texts = connection.sql(texts_sql).to_arrow_reader(run.batch_size)
    waiting: dict[int, list[pa.RecordBatch]] = {}
    held = 0
    # hashes are random: neither a dictionary nor compression shrinks them
    with pq.ParquetWriter(
        path, SCRATCH_SCHEMA, compression="none", use_dictionary=False, write_statistics=["key"]
    ) as writer:
        for batch in stream_shingle_sets(texts, run):
            parts = batch.column("part")
            for part in pc.unique(parts).to_pylist():
                # filter copies: nothing kept refers to the exported batch of page bodies
                rows = batch.filter(pc.equal(parts, part))
                columns = [rows.column(name) for name in SCRATCH_SCHEMA.names]
                waiting.setdefault(part, []).append(
                    pa.RecordBatch.from_arrays(columns, schema=SCRATCH_SCHEMA)
                )
            held += batch.nbytes
            if held > budget // 2:
                _flush(writer, waiting)
                held = 0
        _flush(writer, waiting)


def _flush(writer: pq.ParquetWriter, waiting: dict) -> None:
    for part in sorted(waiting):
        writer.write_table(pa.Table.from_batches(waiting[part], SCRATCH_SCHEMA))
    waiting.clear()


def _oriented(connection, tables: tuple[str, str], sets: str, budget: int):
    """The blocked merge of the pairs over the keyed ``sets``, as batches of SCHEMA: first the pairs
    within a partition, then the few across partitions (apart, so that their keys do not widen the
    near pairs' reads)."""
    pairs, anchors = tables
    missing = connection.execute(f"""
        select doc_id from {anchors}
        where key not in (select key from {sets})
        order by doc_id
        limit 1
    """).fetchall()
    if missing:
        raise ValueError(
            f"exact Jaccard: no text for the anchor document {missing[0][0]} (int_shingle_texts)"
        )
    doc_ids = connection.sql(f"select doc_id from {anchors} order by key").to_arrow_table()
    doc_ids = doc_ids.column(0).combine_chunks().cast(pa.string())
    keyed_pairs = f"""
        select
            least(l.key, r.key) as low_doc_id,
            greatest(l.key, r.key) as high_doc_id,
            cast(l.key > r.key as bigint) as swapped,
            p.left_shingle_set_key,
            p.right_shingle_set_key
        from {pairs} as p
        inner join {anchors} as l on p.left_anchor_doc_id = l.doc_id
        inner join {anchors} as r on p.right_anchor_doc_id = r.doc_id
        where l.part {{}} r.part
    """
    carry = ("swapped", "left_shingle_set_key", "right_shingle_set_key")
    within, across, parts = connection.execute(f"""
        select
            count(*) filter (where l.part = r.part),
            count(*) filter (where l.part <> r.part),
            (select max(part) + 1 from {anchors})
        from {pairs} as p
        inner join {anchors} as l on p.left_anchor_doc_id = l.doc_id
        inner join {anchors} as r on p.right_anchor_doc_id = r.doc_id
    """).fetchall()[0]
    print(f"[exact jaccard] {within:,} pairs within and {across:,} across {parts:,} partition(s)", flush=True)
    for near in ("=", "<>"):
        for batch in pair_intersections(connection, keyed_pairs.format(near), sets, budget, carry, key="key"):
            yield _by_doc_id(batch, doc_ids)


def _by_doc_id(batch: pa.RecordBatch, doc_ids: pa.Array) -> pa.RecordBatch:
    """A merge batch over keys as a batch of SCHEMA: doc_ids, each pair oriented as int_anchor_pairs."""
    low_ids = doc_ids.take(batch.column("low_doc_id"))
    high_ids = doc_ids.take(batch.column("high_doc_id"))
    low_counts, high_counts = batch.column("low_shingle_count"), batch.column("high_shingle_count")
    # a pair whose left anchor got the higher key: its key order is the reverse of its doc_id order
    swapped = pc.equal(batch.column("swapped"), 1)
    return pa.RecordBatch.from_arrays(
        [
            pc.if_else(swapped, high_ids, low_ids),
            pc.if_else(swapped, low_ids, high_ids),
            pc.if_else(swapped, high_counts, low_counts),
            pc.if_else(swapped, low_counts, high_counts),
            batch.column("shared_shingles"),
            batch.column("left_shingle_set_key"),
            batch.column("right_shingle_set_key"),
        ],
        schema=SCHEMA,
    )
