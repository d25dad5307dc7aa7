"""`dbt build --vars '{documents_path: ...}'` on your own CSV or Parquet: exact scores, extra columns kept."""

import itertools

import duckdb
import pytest

from tests.python.helpers.corpora import multilingual_corpus
from tests.python.helpers.dbt_runner import build_table, run_dbt
from webdedup.core import reference as ref

pytestmark = pytest.mark.dbt


@pytest.fixture(scope="module")
def parquet_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("own_parquet")
    table = multilingual_corpus()
    # small batches: several batches through the worker processes, which must keep doc_id order
    build_table(work, table, batch_size=16)
    return work, table


def test_every_scored_jaccard_equals_the_reference(parquet_run):
    work, table = parquet_run
    bodies = dict(zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True))
    sets = {d: ref.token_shingles(ref.normalize_text(b).split()) for d, b in bodies.items()}
    scored = duckdb.sql(
        f"select left_doc_id, right_doc_id, jaccard from '{work / 'out' / 'scored_pairs.parquet'}'"
    )
    rows = scored.fetchall()
    assert rows
    for left, right, jaccard in rows:
        assert jaccard == ref.jaccard(sets[left], sets[right]), (left, right)
    # nothing below the threshold is accepted, and the clusters are the brute-force components
    brute = [
        (a, b) for a, b in itertools.combinations(sorted(sets), 2) if ref.jaccard(sets[a], sets[b]) >= 0.7
    ]
    assert {(a, b) for a, b, j in rows if j >= 0.7} <= set(brute)
    root = {d: d for d in sets}

    def find(d):
        while root[d] != d:
            d = root[d]
        return d

    for a, b in brute:
        root[max(find(a), find(b))] = min(find(a), find(b))
    clusters = dict(
        duckdb.sql(f"select doc_id, cluster_id from '{work / 'out' / 'clusters.csv'}'").fetchall()
    )
    # each cluster is named after its first crawled member (then the smallest doc_id)
    crawled = dict(zip(table["doc_id"].to_pylist(), table["crawled_at"].to_pylist(), strict=True))
    first = {}
    for d in sorted(sets, key=lambda d: (crawled[d], d)):
        first.setdefault(find(d), d)
    assert clusters == {d: f"cluster-{first[find(d)]}" for d in sets}


def test_output_files_are_sorted_by_their_keys(parquet_run):
    work, table = parquet_run
    ids = [
        r[0] for r in duckdb.sql(f"select doc_id from '{work / 'out' / 'fingerprinted.parquet'}'").fetchall()
    ]
    assert ids == sorted(table["doc_id"].to_pylist())
    pairs = duckdb.sql(
        f"select left_doc_id, right_doc_id from '{work / 'out' / 'scored_pairs.parquet'}'"
    ).fetchall()
    assert pairs == sorted(pairs)


def test_extra_columns_and_types_are_carried_to_deduped_documents(parquet_run):
    work, table = parquet_run
    kept = duckdb.sql(f"select * from '{work / 'out' / 'deduped_documents.parquet'}'")
    assert {"url", "warc_record_offset", "cluster_id", "cluster_size"} <= set(kept.columns)
    rows = kept.fetchall()
    clusters = duckdb.sql(
        f"select count(distinct cluster_id) from '{work / 'out' / 'clusters.csv'}'"
    ).fetchall()
    assert len(rows) == clusters[0][0]
    assert (
        duckdb.sql(f"select count(*) from '{work / 'out' / 'clusters.csv'}'").fetchall()[0][0]
        == table.num_rows
    )


def test_empty_and_short_documents_are_kept(parquet_run):
    work, _ = parquet_run
    empty = duckdb.sql(
        f"select doc_id, cluster_size from '{work / 'out' / 'clusters.csv'}' c where doc_id in "
        f"(select doc_id from '{work / 'out' / 'fingerprinted.parquet'}' where token_count = 0)"
    ).fetchall()
    assert len(empty) == 3 and all(size == 1 for _, size in empty)  # J(empty, empty) = 0: never duplicates
    shorts = duckdb.sql(
        f"select cluster_size from '{work / 'out' / 'clusters.csv'}' c join "
        f"'{work / 'out' / 'fingerprinted.parquet'}' f using (doc_id) where f.token_count = 2"
    ).fetchall()
    assert shorts == [(2,), (2,)]


def test_csv_input_keeps_leading_zeros_and_missing_columns_are_named(tmp_path):
    table = multilingual_corpus(n_groups=6)
    csv_path = tmp_path / "docs.csv"
    con = duckdb.connect()
    con.register("docs", table)
    con.sql(f"copy docs to '{csv_path}' (format csv, header true)")
    run_dbt(
        ["build"],
        db_path=tmp_path / "db.duckdb",
        dbt_vars={"documents_path": str(csv_path), "output_dir": str(tmp_path / "out")},
    )
    ids = duckdb.sql(
        f"select doc_id from '{tmp_path / 'out' / 'deduped_documents.parquet'}'",
    ).fetchall()
    assert all(len(i[0]) == 5 for i in ids)

    con.sql(
        f"copy (select * exclude (body) from docs) to '{tmp_path / 'nobody.csv'}' (format csv, header true)"
    )
    result = run_dbt(
        ["build"],
        db_path=tmp_path / "db2.duckdb",
        check=False,
        dbt_vars={"documents_path": str(tmp_path / "nobody.csv"), "output_dir": str(tmp_path / "o2")},
    )
    assert result.returncode != 0
    assert f"documents_path '{tmp_path / 'nobody.csv'}' is missing required column(s): body" in result.stdout
    assert not (tmp_path / "o2" / "deduped_documents.parquet").exists()
