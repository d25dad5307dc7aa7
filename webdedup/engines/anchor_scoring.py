"""int_anchor_intersections on DuckDB: the shared shingles of the anchor pairs a build lacks, with the
anchors' shingle sets held only while they are counted.

A shingle set is 8 bytes per distinct shingle (about 5 KB per web page) of random hashes that no
compression shrinks: stored for every candidate anchor, the sets were the largest table of a build
(10.6 GB of a 28.5 GB database at 10M generated pages, more on corpora with more duplicates).  So they
live in a scratch Parquet file in DuckDB's temp_directory for the duration of this model only:

1. the pairs to count: int_anchor_pairs minus those the stored table holds (all of them on a full build);
2. their anchors' shingled texts (int_shingle_texts) are read in stored order, shingled by the code
   int_fingerprints uses (webdedup/core/stream.py, webdedup/core/fingerprint.py) and written to the
   scratch file by pyarrow, batch by batch, each set with an ordinal key in that order: neither the
   bodies nor the sets are sorted, and memory holds the batches in flight plus the doc_ids (copied out
   of their batches: ``blocked_jaccard.detached``);
3. the blocked merge (webdedup/engines/blocked_jaccard.py) counts each pair over the ordinal keys, whose
   storage order (and the row groups' key statistics) lets a block read only its own sets;
4. the keys are mapped back to doc_ids, each pair oriented as int_anchor_pairs orients it
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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from webdedup.core.fingerprint import SHINGLE_SET_SCHEMA
from webdedup.core.stream import settings_from_row, stream_shingle_sets
from webdedup.engines.blocked_jaccard import STREAM_ROWS, detached, output_schema, pair_intersections

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


def model_stream(session, anchor_pairs, documents, settings, block_mb, existing=None) -> pa.RecordBatchReader:
    """int_anchor_intersections: the pairs of ``anchor_pairs`` (int_anchor_pairs) that ``existing`` lacks
    (the stored table of an incremental build, whose pre-hook deleted the pairs no longer current),
    counted over the shingle sets of their anchors' texts in ``documents`` (int_shingle_texts) with the
    settings of ``settings`` (int_run_settings), as a stream (``session`` runs the model's ``create
    table`` while it is consumed)."""
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
    return pa.RecordBatchReader.from_batches(
        SCHEMA, _counted(connection, relation_name(documents), run, budget)
    )


def _counted(connection, documents: str, run, budget: int):
    suffix = uuid.uuid4().hex[:12]
    pairs = f"webdedup_anchor_pairs_{suffix}"
    connection.execute(f"create temp table {pairs} as select distinct * from webdedup_pending_pairs")
    connection.unregister("webdedup_pending_pairs")
    folder = connection.execute("select current_setting('temp_directory')").fetchall()[0][0] or "."
    path = os.path.join(folder, f"webdedup_shingle_sets_{suffix}.parquet")
    try:
        if not connection.execute(f"select count(*) from {pairs}").fetchall()[0][0]:
            return
        os.makedirs(folder, exist_ok=True)
        doc_ids = _write_sets(connection, pairs, documents, path, run)
        sets = "read_parquet('{}')".format(path.replace("'", "''"))
        yield from _oriented(connection, pairs, sets, doc_ids, budget)
    finally:
        connection.execute(f"drop table if exists {pairs}")
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def _write_sets(connection, pairs: str, documents: str, path: str, run) -> pa.Array:
    """Shingle the texts of the anchors of ``pairs`` into the Parquet file ``path`` (SCRATCH_SCHEMA, one
    row group per shingled batch), keys 0, 1, ... in the order the texts are stored; returns the doc_ids
    by key."""
    texts = connection.sql(f"""
        select doc_id, body from {documents}
        where doc_id in (
            select left_anchor_doc_id from {pairs}
            union
            select right_anchor_doc_id from {pairs}
        )
    """).to_arrow_reader(run.batch_size)
    doc_ids: list[pa.Array] = []
    # hashes are random: neither a dictionary nor compression shrinks them; the key's statistics let a
    # block's reads skip the row groups outside its keys
    with pq.ParquetWriter(
        path, SCRATCH_SCHEMA, compression="none", use_dictionary=False, write_statistics=["key"]
    ) as writer:
        first = 0
        for batch in stream_shingle_sets(texts, run):
            doc_ids.append(detached(batch.column(0)))
            keys = pa.array(np.arange(first, first + batch.num_rows, dtype=np.int64))
            first += batch.num_rows
            writer.write_batch(pa.RecordBatch.from_arrays([keys, *batch.columns], schema=SCRATCH_SCHEMA))
    return pa.chunked_array(doc_ids, pa.string()).combine_chunks()


def _oriented(connection, pairs: str, sets: str, doc_ids: pa.Array, budget: int):
    """The blocked merge of ``pairs`` over the keyed ``sets``, as batches of SCHEMA."""
    missing = connection.execute(f"""
        select doc_id from (
            select left_anchor_doc_id as doc_id from {pairs}
            union
            select right_anchor_doc_id from {pairs}
        ) as anchors
        where doc_id not in (select doc_id from {sets})
        order by doc_id
        limit 1
    """).fetchall()
    if missing:
        raise ValueError(
            f"exact Jaccard: no text for the anchor document {missing[0][0]} (int_shingle_texts)"
        )
    keyed_pairs = f"""
        select
            least(l.key, r.key) as low_doc_id,
            greatest(l.key, r.key) as high_doc_id,
            cast(l.key > r.key as bigint) as swapped,
            p.left_shingle_set_key,
            p.right_shingle_set_key
        from {pairs} as p
        inner join {sets} as l on p.left_anchor_doc_id = l.doc_id
        inner join {sets} as r on p.right_anchor_doc_id = r.doc_id
    """
    carry = ("swapped", "left_shingle_set_key", "right_shingle_set_key")
    for batch in pair_intersections(connection, keyed_pairs, sets, budget, carry, key="key"):
        low_ids = doc_ids.take(batch.column("low_doc_id"))
        high_ids = doc_ids.take(batch.column("high_doc_id"))
        low_counts, high_counts = batch.column("low_shingle_count"), batch.column("high_shingle_count")
        # a pair whose left anchor got the higher key: its key order is the reverse of its doc_id order
        swapped = pc.equal(batch.column("swapped"), 1)
        yield pa.RecordBatch.from_arrays(
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
