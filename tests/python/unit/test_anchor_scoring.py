"""int_anchor_intersections on DuckDB (webdedup/engines/anchor_scoring.py) against the specification's
shingles: every pair's shared count equals the intersection of the spec's word-shingle string sets
(webdedup/core/reference.py) of the two texts, pairs keep int_anchor_pairs' orientation whichever anchor
the scratch keys put first, an incremental call counts only the pairs the stored table lacks, and the
scratch database is gone when the stream ends.
"""

from __future__ import annotations

import itertools
import random

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from webdedup.core import reference
from webdedup.engines import anchor_scoring, scratch_sets

WORDS = [f"w{number}" for number in range(30)]
SHINGLE_SIZE = 3


def _spec_shingles(body: str) -> set[str]:
    return reference.token_shingles(reference.normalize_text(body).split(), size=SHINGLE_SIZE)


@pytest.fixture
def database(tmp_path):
    rng = random.Random(11)
    connection = duckdb.connect(str(tmp_path / "build.duckdb"))
    connection.execute(f"set temp_directory = '{tmp_path / 'spill'}'")
    # stored in an order unrelated to doc_id order, so scratch keys and doc_ids disagree on which is first
    doc_ids = [f"doc-{number:03d}" for number in range(40)]
    rng.shuffle(doc_ids)
    texts = {}
    for doc_id in doc_ids:
        size = rng.choice([0, 2, 8, 25])
        texts[doc_id] = " ".join(rng.choice(WORDS[:12]) for _ in range(size)).upper()
    connection.register("texts_arrow", pa.table({"doc_id": list(texts), "body": list(texts.values())}))
    connection.execute("create table texts as select * from texts_arrow")
    names = sorted(texts)
    pairs = sorted({tuple(sorted(rng.sample(names, 2))) for _ in range(150)})
    connection.register(
        "pairs_arrow",
        pa.table(
            {
                "left_anchor_doc_id": [low for low, _ in pairs],
                "right_anchor_doc_id": [high for _, high in pairs],
                "left_shingle_set_key": [names.index(low) for low, _ in pairs],
                "right_shingle_set_key": [1000 + names.index(high) for _, high in pairs],
            }
        ),
    )
    connection.execute("create table anchor_pairs as select * from pairs_arrow")
    # shingle counts only size the scratch partitions: any count gives the same results
    counts = {doc_id: rng.randrange(0, 40) for doc_id in doc_ids}
    connection.register(
        "groups_arrow", pa.table({"doc_id": list(counts), "shingle_count": list(counts.values())})
    )
    connection.execute("create table groups as select * from groups_arrow")
    connection.execute(f"""
        create table settings as select {SHINGLE_SIZE} as shingle_size, 8 as num_hashes, 2 as rows_per_band,
            42 as seed, 7 as batch_size, 2 as fingerprint_workers
    """)
    return connection, texts, pairs, tmp_path


def _run(connection, existing=None) -> list[dict]:
    reader = anchor_scoring.model_stream(
        connection,
        connection.sql("select * from anchor_pairs"),
        connection.sql("select * from texts"),
        connection.sql("select * from groups"),
        connection.sql("select * from settings"),
        "1",
        existing,
    )
    return pa.Table.from_batches(list(reader), schema=anchor_scoring.SCHEMA).to_pylist()


@pytest.mark.parametrize("parallel_rows", [1, 1 << 14])
@pytest.mark.parametrize("chunk_rows", [1, 7, 1 << 20])
@pytest.mark.parametrize("budget_bytes", [1, 300, 10**9])
def test_counts_equal_the_specs_shingle_sets(database, monkeypatch, budget_bytes, chunk_rows, parallel_rows):
    """Any partitioning of the sets (one set each, several, one) and any chunking of the pairs (chunks
    that end inside a partition's run of pairs, or hold them all) give the spec's counts, also when the
    mapped pages are handed back between chunks, and with each run of pairs merged on one thread or
    shared among the settings' two workers."""
    connection, texts, pairs, tmp_path = database
    monkeypatch.setattr(anchor_scoring, "block_budget", lambda _: budget_bytes)
    monkeypatch.setattr(anchor_scoring, "PAIR_CHUNK_ROWS", chunk_rows)
    monkeypatch.setattr(anchor_scoring, "PARALLEL_MERGE_ROWS", parallel_rows)
    released = []
    release = scratch_sets.release
    monkeypatch.setattr(scratch_sets, "release", lambda mapping: (released.append(1), release(mapping)))
    rows = _run(connection)
    if budget_bytes == 1 and chunk_rows == 1:  # pages handed back as the pairs moved on, counts still right
        assert released
    assert sorted((row["low_doc_id"], row["high_doc_id"]) for row in rows) == pairs
    names = sorted(texts)
    for row in rows:
        low, high = _spec_shingles(texts[row["low_doc_id"]]), _spec_shingles(texts[row["high_doc_id"]])
        assert row["shared_shingles"] == len(low & high), row
        assert (row["low_shingle_count"], row["high_shingle_count"]) == (len(low), len(high)), row
        assert row["low_shingle_set_key"] == names.index(row["low_doc_id"])
        assert row["high_shingle_set_key"] == 1000 + names.index(row["high_doc_id"])
    assert not list((tmp_path / "spill").glob("webdedup_shingle_sets_*")), "the scratch file is deleted"


def test_one_partitions_sets_are_merged_at_a_time_within_a_chunk(database, monkeypatch):
    """With one set per partition (a 1-byte budget) and every pair in one chunk, each merge call reads
    the sets of one high partition, and the mapped pages are handed back before the next: the pages in
    use stay one partition's, not the whole chunk's (a 1M-pair chunk spans several 512 MB partitions)."""
    connection, _, pairs, _ = database
    monkeypatch.setattr(anchor_scoring, "block_budget", lambda _: 1)
    monkeypatch.setattr(anchor_scoring, "PAIR_CHUNK_ROWS", 1 << 20)
    events = []
    merge, release = anchor_scoring.intersections, scratch_sets.release

    def spied_merge(lv, ls, le, rv, rs, re, out, rows):
        events.append({int(rs[row]) for row in rows})
        return merge(lv, ls, le, rv, rs, re, out, rows)

    monkeypatch.setattr(anchor_scoring, "intersections", spied_merge)
    monkeypatch.setattr(scratch_sets, "release", lambda mapping: (events.append("release"), release(mapping)))
    assert len(_run(connection)) == len(pairs)
    merges = [event for event in events if event != "release"]
    assert all(len(starts) == 1 for starts in merges), "a merge call read the sets of one high partition"
    assert len(merges) > 1 and events.count("release") == len(merges) - 1
    assert all(earlier == "release" or later == "release" for earlier, later in itertools.pairwise(events)), (
        "the pages are handed back between two partitions' merges"
    )


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_merges_shared_among_threads_count_every_row_once_as_sets_do(monkeypatch, threads):
    """merge_rows on a pool gives each row the size of its two sets' intersection (Python sets), rows
    outside ``rows`` untouched, whatever the number of threads and however the rows split."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(anchor_scoring, "PARALLEL_MERGE_ROWS", 1)
    rng = np.random.default_rng(threads)
    sets = [np.unique(rng.integers(0, 400, rng.integers(0, 60)).astype(np.uint64)) for _ in range(50)]
    values = np.concatenate(sets)
    ends = np.cumsum([len(s) for s in sets])
    starts = ends - [len(s) for s in sets]
    left, right = rng.integers(0, 50, 997), rng.integers(0, 50, 997)
    rows = np.sort(rng.choice(997, 900, replace=False))
    out = np.full(997, -1, dtype=np.int64)
    arguments = (values, starts[left], ends[left], values, starts[right], ends[right], out)
    with ThreadPoolExecutor(threads) as executor:
        anchor_scoring.merge_rows(arguments, rows, (executor, threads) if threads > 1 else None)
    expected = np.full(997, -1, dtype=np.int64)
    for row in rows:
        expected[row] = len(set(sets[left[row]].tolist()) & set(sets[right[row]].tolist()))
    assert out.tolist() == expected.tolist()


def test_partition_runs_cut_where_the_partition_changes():
    runs = anchor_scoring.partition_runs(np.array([5, 5, 6, 5, 5, 5]))
    assert [run.tolist() for run in runs] == [[0, 1], [2], [3, 4, 5]]
    assert [run.tolist() for run in anchor_scoring.partition_runs(np.array([3]))] == [[0]]


def test_an_incremental_call_counts_only_the_pairs_the_table_lacks(database):
    connection, _, pairs, _ = database
    stored = pairs[::3]
    connection.register(
        "stored_arrow",
        pa.table({"low_doc_id": [p[0] for p in stored], "high_doc_id": [p[1] for p in stored]}),
    )
    connection.execute("create table stored as select * from stored_arrow")
    rows = _run(connection, existing="stored")
    assert sorted((row["low_doc_id"], row["high_doc_id"]) for row in rows) == sorted(set(pairs) - set(stored))


def test_nothing_to_count_gives_no_rows_and_no_scratch_file(database):
    connection, _, _, tmp_path = database
    connection.execute("delete from anchor_pairs")
    assert _run(connection) == []
    assert not list(tmp_path.glob("**/webdedup_shingle_sets_*"))


def test_an_anchor_without_text_is_an_error_naming_it(database):
    connection, _, _, tmp_path = database
    connection.execute("insert into anchor_pairs values ('doc-000', 'doc-999', 0, 0)")
    with pytest.raises(ValueError, match="doc-999"):
        _run(connection)
    assert not list((tmp_path / "spill").glob("webdedup_shingle_sets_*"))


def test_block_budget_must_be_a_positive_number_of_megabytes():
    with pytest.raises(ValueError, match="jaccard_block_mb"):
        anchor_scoring.block_budget("0")
    with pytest.raises(ValueError, match="jaccard_block_mb"):
        anchor_scoring.block_budget("512; drop table x")
    assert anchor_scoring.block_budget(" 3 ") == 3_000_000


def test_near_duplicates_get_neighbouring_keys_and_partitions_follow_the_budget():
    # three cliques of pairs (clusters) whose doc_ids interleave, and set sizes from shingle_count
    connection = duckdb.connect()
    cliques = [[f"d{number:02d}" for number in range(start, 30, 3)] for start in range(3)]
    pairs = [(a, b) for clique in cliques for i, a in enumerate(clique) for b in clique[i + 1 :]]
    connection.register(
        "pairs_arrow",
        pa.table({"left_anchor_doc_id": [a for a, _ in pairs], "right_anchor_doc_id": [b for _, b in pairs]}),
    )
    connection.execute("create table pairs as select * from pairs_arrow")
    doc_ids = sorted({doc for pair in pairs for doc in pair})
    connection.register("groups_arrow", pa.table({"doc_id": doc_ids, "shingle_count": [100] * len(doc_ids)}))
    connection.execute("create table groups as select * from groups_arrow")
    size = 100 * 8 + 64  # HASH_BYTES per shingle plus SET_OVERHEAD_BYTES
    keyed = anchor_scoring._keyed_anchors("pairs", "groups", 4 * size)
    rows = connection.execute(f"select doc_id, key, part from ({keyed}) order by key").fetchall()
    assert [key for _, key, _ in rows] == list(range(len(doc_ids)))
    for clique in cliques:
        keys = sorted(key for doc_id, key, _ in rows if doc_id in clique)
        assert keys == list(range(keys[0], keys[0] + len(clique))), "a clique's keys are consecutive"
    parts = [part for _, _, part in rows]
    assert parts == sorted(parts) and all(parts.count(part) == 4 for part in set(parts[:-2])), parts


def test_the_sql_function_counts_any_pairs_of_documents_as_the_spec(database):
    """webdedup_pair_intersections (macro exact_jaccard on DuckDB), registered as the plugin registers it
    and called inside a query with the pairs as one list: each pair's shared shingles and both set sizes
    are the spec's, one row per distinct pair (a document paired with itself included); no pairs give no
    rows, and a document without text is an error naming it."""
    from webdedup.engines.duckdb_plugin import register_functions

    connection, texts, pairs, _ = database
    register_functions(connection)
    names = sorted(texts)
    asked = [*pairs, pairs[0], (names[0], names[0])]
    connection.register(
        "asked",
        pa.table({"low_doc_id": [low for low, _ in asked], "high_doc_id": [high for _, high in asked]}),
    )

    def counted(pairs_sql: str) -> list[tuple]:
        return connection.execute(f"""
            select unnest(webdedup_pair_intersections(
                (select list({{'low_doc_id': low_doc_id, 'high_doc_id': high_doc_id}}) from ({pairs_sql})),
                'texts', 'groups', 'settings', '1'
            ), recursive := true)
        """).fetchall()

    rows = counted("select * from asked")
    assert sorted((low, high) for low, high, _, _ in rows) == sorted(set(asked))
    for low, high, both_counts, shared in rows:
        low_set, high_set = _spec_shingles(texts[low]), _spec_shingles(texts[high])
        assert (both_counts, shared) == (len(low_set) + len(high_set), len(low_set & high_set))
    assert counted("select * from asked where false") == []
    with pytest.raises(duckdb.Error, match="no text for the anchor document doc-999"):
        counted("select 'doc-000' as low_doc_id, 'doc-999' as high_doc_id")
