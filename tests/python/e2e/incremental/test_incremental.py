"""Incremental builds: a folder that gains batches, documents that change or leave, and new settings all
give exactly the outputs of a full build on the same input (compared file by file and table by table),
each build's changelog lists exactly the documents whose status differs between the two releases, and
a build joins and scores only the pairs of the pages it adds and recomputes only the components they
touch."""

import csv
import itertools
import math
import os
import re
import shutil

import duckdb
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from benchmarks import generate_corpus
from tests.python.helpers.dbt_runner import edit_build_file, run_dbt

OUTPUTS = [
    "fingerprinted.parquet",
    "scored_pairs.parquet",
    "duplicate_pairs.csv",
    "clusters.csv",
    "cluster_inspection.csv",
    "deduped_documents.parquet",
    "candidate_summary.csv",
    "removals.parquet",
]
TABLES = [
    "main_internal.stg_documents",
    "main_internal.int_fingerprints",
    "main_internal.int_band_memberships",
    "main_internal.int_anchor_pairs",
    "main_internal.int_anchor_intersections",
    "main_internal.int_candidate_pairs",
    "main_internal.int_components",
    "main_internal.int_member_jaccards",
    "clusters",
    "cluster_inspection",
]


def _statuses(output_dir):
    """doc_id -> (kept, kept doc, cluster) of a published release; {} before the first."""
    path = output_dir / "clusters.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as handle:
        return {
            row["doc_id"]: (
                row["is_representative"] == "true",
                row["representative_doc_id"],
                row["cluster_id"],
            )
            for row in csv.DictReader(handle)
        }


def _expected_changelog(before, after):
    """Brute force over two releases: every document whose status differs, with its change."""
    origins = {}
    for doc_id, (_, _, cluster_id) in after.items():
        if doc_id in before:
            origins.setdefault(cluster_id, set()).add(before[doc_id][2])
    changes = {}
    for doc_id in before.keys() | after.keys():
        old, new = before.get(doc_id), after.get(doc_id)
        if old == new:
            continue
        if old is None:
            changes[doc_id] = "added"
        elif new is None:
            changes[doc_id] = "left_input"
        elif old[0] != new[0]:
            changes[doc_id] = "became_kept" if new[0] else "became_duplicate"
        elif old[1] != new[1]:
            changes[doc_id] = "kept_doc_replaced"
        else:
            changes[doc_id] = "clusters_merged" if len(origins[new[2]]) > 1 else "cluster_id_changed"
    return changes


def _build(work, name, folder, extra_vars=None):
    """A build of ``folder`` in work/name, its changelog checked; returns how many pages it fingerprinted."""
    return _build_and_log(work, name, folder, extra_vars)[0]


def _build_and_log(work, name, folder, extra_vars=None):
    """_build, and its output."""
    (work / name).mkdir(exist_ok=True)
    before = _statuses(work / name / "out")
    result = run_dbt(
        ["build"],
        db_path=work / name / "db.duckdb",
        dbt_vars={"documents_path": str(folder), "output_dir": str(work / name / "out")} | (extra_vars or {}),
    )
    changelog = {doc_id: change for doc_id, change, *_ in _rows(work / name / "out" / "changelog.parquet")}
    assert changelog == _expected_changelog(before, _statuses(work / name / "out"))
    done = re.findall(r"\[fingerprints\] done: ([\d,]+) documents", result.stdout)
    return int(done[-1].replace(",", "")), result.stdout


def _files_read(stdout):
    """(files read whole, input files) that stg_documents reports, or None when it read everything."""
    found = re.findall(r"stg_documents: reads (\d+) of (\d+) input file", stdout)
    return tuple(map(int, found[-1])) if found else None


def _rows(path):
    return duckdb.sql(f"select * from '{path}' order by all").fetchall()


def _table(db_path, table):
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.sql(f"select * from {table} order by all").fetchall()


def _assert_same_as_full_build(work, folder, incremental, extra_vars=None):
    full = f"full-{incremental}"
    shutil.rmtree(work / full, ignore_errors=True)
    _build(work, full, folder, extra_vars)
    for name in OUTPUTS:
        assert _rows(work / incremental / "out" / name) == _rows(work / full / "out" / name), name
    for table in TABLES:
        incremental_rows = _table(work / incremental / "db.duckdb", table)
        assert incremental_rows == _table(work / full / "db.duckdb", table), table


def _marked_then_new_batch(work, corpus, first, added, marks, selector):
    """A build of the first ``first`` pages, the ``marks`` (SQL updates) run on its database behind dbt's
    back, then ``dbt run --select selector`` after a batch of the next ``added`` pages, and a full build
    ("full") of both batches beside it.  Returns the incremental database's path."""
    folder = work / "crawl"
    folder.mkdir()
    pq.write_table(corpus.slice(0, first), folder / "batch-1.parquet")
    _build(work, "incremental", folder)
    db_path = work / "incremental" / "db.duckdb"
    with edit_build_file(db_path) as con:
        for mark in marks:
            con.execute(mark)
    pq.write_table(corpus.slice(first, added), folder / "batch-2.parquet")
    run_dbt(
        ["run", "--select", selector],
        db_path=db_path,
        dbt_vars={"documents_path": str(folder), "output_dir": str(work / "incremental" / "out")},
    )
    _build(work, "full", folder)
    return db_path


@pytest.fixture(scope="module")
def corpus():
    table = generate_corpus.generate(1500, seed=5)
    assert table.num_rows == 1500
    return table


def test_batches_added_one_by_one_equal_one_full_build(tmp_path, corpus):
    folder = tmp_path / "crawl"
    folder.mkdir()
    thirds = [corpus.slice(0, 500), corpus.slice(500, 500), corpus.slice(1000, 500)]
    clusters = []
    for i, batch in enumerate(thirds, start=1):
        pq.write_table(batch, folder / f"batch-{i}.parquet")
        assert _build(tmp_path, "incremental", folder) == 500  # only the new batch is fingerprinted
        rows = _rows(tmp_path / "incremental" / "out" / "clusters.csv")
        clusters.append({doc_id: cluster_id for cluster_id, doc_id, *_ in rows})
    _assert_same_as_full_build(tmp_path, folder, "incremental")

    # a cluster keeps its id when a later batch adds members; it changes only when clusters merge
    for before, after in itertools.pairwise(clusters):
        for cluster_id in set(before.values()):
            members = [doc_id for doc_id, c in before.items() if c == cluster_id]
            (new_id,) = {after[doc_id] for doc_id in members}
            merged_from = {before[d] for d, c in after.items() if c == new_id and d in before}
            assert new_id == cluster_id or len(merged_from) > 1, (cluster_id, new_id)


def test_changed_and_removed_documents_and_new_settings_equal_a_full_build(tmp_path, corpus):
    folder = tmp_path / "crawl"
    folder.mkdir()
    pq.write_table(corpus.slice(0, 800), folder / "batch-1.parquet")
    _build(tmp_path, "incremental", folder)

    # one page rewritten, one page copied onto another id, two pages removed
    bodies = corpus.column("body").to_pylist()[:800]
    bodies[3] = "A completely different page about something else entirely, written for this test."
    bodies[10] = bodies[20]
    changed = corpus.slice(0, 800).set_column(5, "body", pa.array(bodies, pa.string()))
    keep = [i for i in range(800) if i not in (7, 8)]
    (folder / "batch-1.parquet").unlink()
    pq.write_table(changed.take(keep), folder / "batch-1.parquet")
    assert _build(tmp_path, "incremental", folder) == 2  # only the two changed pages
    _assert_same_as_full_build(tmp_path, folder, "incremental")

    # new settings redo every document
    assert _build(tmp_path, "incremental", folder, {"shingle_size": 4}) == 798
    _assert_same_as_full_build(tmp_path, folder, "incremental", {"shingle_size": 4})

    # a higher threshold: no fingerprint is redone, edges between unchanged pages go (components split)
    higher = {"shingle_size": 4, "threshold": 0.95}
    edges = len(_rows(tmp_path / "incremental" / "out" / "duplicate_pairs.csv"))
    assert _build(tmp_path, "incremental", folder, higher) == 0
    assert len(_rows(tmp_path / "incremental" / "out" / "duplicate_pairs.csv")) < edges
    _assert_same_as_full_build(tmp_path, folder, "incremental", higher)


def test_only_new_or_changed_input_rows_are_stored_again(tmp_path, corpus):
    folder = tmp_path / "crawl"
    folder.mkdir()
    first = corpus.slice(0, 300)
    pq.write_table(first, folder / "batch-1.parquet")
    _build(tmp_path, "incremental", folder)
    ids = first.column("doc_id").to_pylist()
    db_path = tmp_path / "incremental" / "db.duckdb"
    # Mark two stored rows behind dbt's back: a build that stored every input row again would undo it.
    with edit_build_file(db_path) as con:
        con.execute(
            "update main_internal.stg_documents set body = 'stored earlier' where doc_id in (?, ?)", ids[:2]
        )

    # a new batch, and a new title (same body) for one page of the first batch
    titles = first.column("title").to_pylist()
    titles[2] = "A new title for the same page"
    first = first.set_column(first.schema.get_field_index("title"), "title", pa.array(titles, pa.string()))
    pq.write_table(first, folder / "batch-1.parquet")
    pq.write_table(corpus.slice(300, 100), folder / "batch-2.parquet")
    assert _build(tmp_path, "incremental", folder) == 100  # a new title is not a new fingerprint
    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute("select count(*) from main_internal.stg_documents").fetchone() == (400,)
        marked = con.execute(
            "select count(*) from main_internal.stg_documents where body = 'stored earlier'"
        ).fetchone()
        assert marked == (2,)  # unchanged rows were not written again
        title = con.execute(
            "select title from main_internal.stg_documents where doc_id = ?", [ids[2]]
        ).fetchone()
        assert title == ("A new title for the same page",)

    # a batch with a new lineage column changes the table's columns: every row is written again
    third = corpus.slice(400, 100)
    third = third.append_column("url", pa.array([f"https://example.org/{i}" for i in range(100)]))
    pq.write_table(third, folder / "batch-3.parquet")
    assert _build(tmp_path, "incremental", folder) == 100
    with duckdb.connect(str(db_path), read_only=True) as con:
        marked = con.execute(
            "select count(*) from main_internal.stg_documents where body = 'stored earlier'"
        ).fetchone()
        assert marked == (0,)  # every row written again
    _assert_same_as_full_build(tmp_path, folder, "incremental")


def _write(table, path):
    """``table`` as a Parquet or CSV file, by ``path``'s suffix."""
    if path.suffix == ".csv":
        pa_csv.write_csv(table, path)
    else:
        pq.write_table(table, path)


def _key_prefix(path, mtime_ns=None):
    """How input_read_key names a file before its staging digest."""
    return f"file {path} size={path.stat().st_size} mtime_ns={mtime_ns or path.stat().st_mtime_ns}"


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_files_staged_before_are_not_read_again_until_they_change(tmp_path, corpus, suffix):
    folder = tmp_path / "crawl"
    folder.mkdir()
    first, second = folder / f"batch-1{suffix}", folder / f"batch-2{suffix}"
    _write(corpus.slice(0, 300), first)
    _build(tmp_path, "incremental", folder)
    db_path = tmp_path / "incremental" / "db.duckdb"
    stg = "main_internal.stg_documents"
    first_id = corpus.column("doc_id")[0].as_py()
    # Mark a stored row behind dbt's back: a build that read batch-1 again would undo it.
    with edit_build_file(db_path) as con:
        con.execute(f"update {stg} set title = 'marked' where doc_id = ?", [first_id])

    _write(corpus.slice(300, 100), second)
    done, log = _build_and_log(tmp_path, "incremental", folder)
    assert (done, _files_read(log)) == (100, (1, 2))
    file_part = "split_part(input_read_key, ' staging ', 1)"
    keys_query = f"select {file_part}, count(*) from {stg} group by all order by all"
    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute(f"select title from {stg} where doc_id = ?", [first_id]).fetchone() == ("marked",)
        # one key per file: its absolute path, size and modification time
        assert con.execute(keys_query).fetchall() == [(_key_prefix(first), 300), (_key_prefix(second), 100)]

    # a new modification time: batch-1 is read again, the marked row written again, every key renewed
    os.utime(first, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    done, log = _build_and_log(tmp_path, "incremental", folder)
    assert (done, _files_read(log)) == (0, (1, 2))
    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute(f"select count(*) from {stg} where title = 'marked'").fetchone() == (0,)
        assert con.execute(keys_query).fetchall() == [
            (_key_prefix(first, 1_700_000_000_000_000_000), 300),
            (_key_prefix(second), 100),
        ]
    # nothing changed: nothing is read whole
    assert _files_read(_build_and_log(tmp_path, "incremental", folder)[1]) == (0, 2)
    _assert_same_as_full_build(tmp_path, folder, "incremental")


def test_a_file_that_leaves_and_comes_back_unchanged_is_read_again(tmp_path, corpus):
    # batch-1 leaves the folder while another file holds one of its pages; it then comes back with the same
    # size and modification time (a move keeps both): its other pages were deleted meanwhile, so it must be
    # read again, not taken as staged
    folder, away = tmp_path / "crawl", tmp_path / "away"
    folder.mkdir()
    away.mkdir()
    pq.write_table(corpus.slice(0, 200), folder / "batch-1.parquet")
    pq.write_table(corpus.slice(200, 100), folder / "batch-2.parquet")
    _build(tmp_path, "incremental", folder)
    (folder / "batch-1.parquet").rename(away / "batch-1.parquet")
    pq.write_table(corpus.slice(0, 1), folder / "moved.parquet")
    _build(tmp_path, "incremental", folder)
    (folder / "moved.parquet").unlink()
    (away / "batch-1.parquet").rename(folder / "batch-1.parquet")
    done, log = _build_and_log(tmp_path, "incremental", folder)
    assert (done, _files_read(log)) == (199, (1, 2))
    _assert_same_as_full_build(tmp_path, folder, "incremental")


def test_a_new_batch_is_paired_and_scored_without_redoing_the_stored_pairs(tmp_path, corpus):
    # Mark every stored anchor pair and count behind dbt's back: a build that recomputed them would undo it.
    db_path = _marked_then_new_batch(
        tmp_path,
        corpus,
        600,
        300,
        [
            "update main_internal.int_anchor_pairs set shared_bands = shared_bands + 1000",
            "update main_internal.int_anchor_intersections set shared_shingles = shared_shingles + 1000",
        ],
        "+int_anchor_intersections",
    )
    first_ids = set(corpus.column("doc_id").to_pylist()[:600])
    for table, count_column in (("int_anchor_pairs", 2), ("int_anchor_intersections", 4)):
        full = set(_table(tmp_path / "full" / "db.duckdb", f"main_internal.{table}"))
        kept = new = 0
        for row in _table(db_path, f"main_internal.{table}"):
            if row[count_column] >= 1000:  # marked: both anchors were stored and unchanged
                assert {row[0], row[1]} <= first_ids, (table, row)
                restored = (*row[:count_column], row[count_column] - 1000, *row[count_column + 1 :])
                assert restored in full, (table, row)
                kept += 1
            else:  # computed by this build: a pair with a page of the new batch
                assert not {row[0], row[1]} <= first_ids, (table, row)
                assert row in full, (table, row)
                new += 1
        assert kept > 10 and new > 10, (table, kept, new)
        assert kept + new == len(full), table


def test_a_new_batch_recomputes_only_the_components_it_touches(tmp_path, corpus):
    # Mark every stored component row behind dbt's back: a build that recomputed it would undo it.
    db_path = _marked_then_new_batch(
        tmp_path,
        corpus,
        700,
        200,
        ["update main_internal.int_components set component_size = component_size + 1000"],
        "+int_components",
    )
    full = _table(tmp_path / "full" / "db.duckdb", "main_internal.int_components")
    new_ids = set(corpus.column("doc_id").to_pylist()[700:900])
    # brute force over the full build: the components a new page belongs to are the touched ones
    touched = {component_id for doc_id, component_id, *_ in full if doc_id in new_ids}
    expected_kept = {row[0] for row in full if row[1] not in touched}
    kept = set()
    for row in _table(db_path, "main_internal.int_components"):
        doc_id, component_id, size, *rest = row
        if size >= 1000:
            kept.add(doc_id)
            row = (doc_id, component_id, size - 1000, *rest)
        assert row in full, row
    assert kept == expected_kept
    # the batch joins stored components too, not only components of its own
    joined = {
        component_id for doc_id, component_id, *_ in full if doc_id not in new_ids and component_id in touched
    }
    assert len(kept) > 100 and len(touched) > 10 and joined, (len(kept), len(touched), len(joined))


def test_a_new_batch_scores_only_the_members_whose_pair_changed(tmp_path, corpus):
    # Keep a copy of the stored rows, then mark them behind dbt's back: a row scored again loses the mark.
    db_path = _marked_then_new_batch(
        tmp_path,
        corpus,
        700,
        200,
        [
            "create table main_internal.before_batch as select * from main_internal.int_member_jaccards",
            "update main_internal.int_member_jaccards"
            " set jaccard_to_representative = -jaccard_to_representative",
        ],
        "+int_member_jaccards",
    )
    table = "main_internal.int_member_jaccards"
    full = {row[0]: row for row in _table(tmp_path / "full" / "db.duckdb", table)}
    before = {row[0]: row for row in _table(db_path, "main_internal.before_batch")}
    # brute force over the two builds: a member keeps its row when its pair (anchors, sets) is unchanged
    expected_kept = {
        doc_id for doc_id, row in full.items() if doc_id in before and before[doc_id][2] == row[2]
    }
    kept = set()
    rows = _table(db_path, table)
    for doc_id, jaccard, pair_state in rows:
        if math.copysign(1.0, jaccard) < 0:  # marked (negated: exact, and -0.0 keeps its sign)
            kept.add(doc_id)
            jaccard = -jaccard
        assert (doc_id, jaccard, pair_state) == full[doc_id]
    assert len(rows) == len(full)
    assert kept == expected_kept
    # members that leave are deleted: test_changed_and_removed_documents_and_new_settings_equal_a_full_build
    assert len(kept) > 20 and len(full) - len(kept) > 5, (len(kept), len(full))
