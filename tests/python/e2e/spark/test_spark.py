"""The same dbt project on Apache Spark (`--target spark`, pyspark in local mode).

* The fixture (runs in `make test`): `python -m webdedup.engines.dbt_spark build --target spark` passes every
  data test and gives the spec's table 24 / 276 / 18 / 18 / 6 / 6 / 12, with the same output files in
  the same layout, and the same rows as the DuckDB run of the fixture.
* A 10,000-document generated corpus and long chained clusters (`make test-spark`, opt-in:
  DEDUP_SPARK_CORPUS=1): DuckDB and Spark give identical signatures, candidate pairs, duplicate pairs,
  clusters and representatives.

Each Spark run starts its own JVM with a warehouse and metastore in a temporary folder.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt, run_dbt_spark
from tests.python.helpers.project import data_tests, manifest_outputs
from tests.python.helpers.spec import SPEC_RESULT

pytest.importorskip("pyspark")
pytestmark = [
    pytest.mark.dbt,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17 (java not on PATH)"),
]

OUTPUTS = [*manifest_outputs(), "manifest.json"]


def _rows(path: Path, columns: str, order_by: str) -> list[tuple]:
    return duckdb.sql(f"select {columns} from '{path}' order by {order_by}").fetchall()


@pytest.fixture(scope="module")
def spark_fixture_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("spark_fixture")
    output_dir = work / "output"
    result = run_dbt_spark(
        ["build", "--exclude-resource-type", "unit_test"], work=work, dbt_vars={"output_dir": str(output_dir)}
    )
    run_results = json.loads((work / "dbt-target" / "run_results.json").read_text())
    return {
        "output_dir": output_dir,
        "log": result.stdout,
        "results": run_results["results"],
        "data_tests": data_tests(work / "dbt-target"),
    }


def test_spark_build_passes_every_data_test(spark_fixture_run):
    statuses = {r["unique_id"]: r["status"] for r in spark_fixture_run["results"]}
    tests = [uid for uid in statuses if uid.startswith("test.")]
    assert set(tests) == spark_fixture_run["data_tests"]  # every data test of the project ran
    assert {uid: s for uid, s in statuses.items() if s not in ("pass", "success", "no-op")} == {}
    assert any(uid.endswith("assert_fixture_counts_match_spec") for uid in tests)


def test_spark_gives_the_spec_result_table(spark_fixture_run):
    with open(spark_fixture_run["output_dir"] / "candidate_summary.csv", newline="") as handle:
        summary = next(csv.DictReader(handle))
    assert {k: int(summary[k]) for k in SPEC_RESULT} == SPEC_RESULT
    assert float(summary["candidate_reduction_pct"]) == 93.48


def test_spark_writes_the_same_files_in_the_same_layout(spark_fixture_run):
    output_dir = spark_fixture_run["output_dir"]
    assert sorted(p.name for p in output_dir.iterdir()) == sorted(OUTPUTS)
    manifest = json.loads((output_dir / "manifest.json").read_text())
    assert manifest["backends"]["engine"] == "spark"
    assert manifest["counts"]["representatives"] == 12
    assert [o["file"] for o in manifest["outputs"]] == manifest_outputs()
    assert all(o["sha256"] for o in manifest["outputs"])


def test_spark_and_duckdb_fixture_rows_are_identical(spark_fixture_run, fixture_run):
    spark, duck = spark_fixture_run["output_dir"], fixture_run["output_dir"]
    for name in ("clusters.csv", "duplicate_pairs.csv", "candidate_summary.csv", "cluster_inspection.csv"):
        assert (spark / name).read_text() == (duck / name).read_text(), name
    columns = "doc_id, token_count, shingle_count, shingle_set_key, signature, band_keys"
    assert _rows(spark / "fingerprinted.parquet", columns, "doc_id") == _rows(
        duck / "fingerprinted.parquet", columns, "doc_id"
    )
    for name, key in (
        ("scored_pairs.parquet", "left_doc_id, right_doc_id"),
        ("deduped_documents.parquet", "doc_id"),
    ):
        assert _rows(spark / name, "*", key) == _rows(duck / name, "*", key), name


def _corpus_rows(output_dir: Path) -> dict[str, list[tuple]]:
    return {
        "signatures": _rows(
            output_dir / "fingerprinted.parquet",
            "doc_id, shingle_count, shingle_set_key, signature, band_keys",
            "doc_id",
        ),
        "candidate_pairs": _rows(
            output_dir / "scored_pairs.parquet",
            "left_doc_id, right_doc_id, shared_bands, jaccard, is_duplicate, reason",
            "left_doc_id, right_doc_id",
        ),
        "duplicate_pairs": _rows(
            output_dir / "duplicate_pairs.csv",
            "left_doc_id, right_doc_id, jaccard",
            "left_doc_id, right_doc_id",
        ),
        "clusters": _rows(
            output_dir / "clusters.csv",
            "cluster_id, doc_id, cluster_size, is_representative, representative_doc_id",
            "doc_id",
        ),
        "representatives": _rows(
            output_dir / "deduped_documents.parquet", "doc_id, cluster_id, cluster_size", "doc_id"
        ),
    }


@pytest.mark.skipif(
    os.environ.get("DEDUP_SPARK_CORPUS", "") in ("", "0"),
    reason="10k-document DuckDB vs Spark comparison is opt-in: make test-spark (DEDUP_SPARK_CORPUS=1)",
)
def test_duckdb_and_spark_agree_on_a_generated_corpus(tmp_path):
    docs = int(os.environ.get("DEDUP_SPARK_CORPUS_DOCS", "10000"))
    corpus = tmp_path / "corpus.parquet"
    subprocess.run(
        [
            sys.executable,
            str(PROJECT_ROOT / "benchmarks" / "generate_corpus.py"),
            "--docs",
            str(docs),
            "--out",
            str(corpus),
        ],
        check=True,
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
    )
    duck_out, spark_out = tmp_path / "duckdb-output", tmp_path / "spark-output"
    # seeds, models and their exports; the data tests are the fixture tests' business
    build = ["build", "--exclude-resource-type", "test", "unit_test"]
    corpus_vars = {"documents_path": str(corpus)}
    run_dbt(build, db_path=tmp_path / "corpus.duckdb", dbt_vars={**corpus_vars, "output_dir": str(duck_out)})
    run_dbt_spark(build, work=tmp_path, dbt_vars={**corpus_vars, "output_dir": str(spark_out)})
    duck, spark = _corpus_rows(duck_out), _corpus_rows(spark_out)
    assert len(duck["signatures"]) == docs
    assert len(duck["duplicate_pairs"]) > docs // 10  # the corpus plants ~30% of documents in groups
    for part in duck:
        assert spark[part] == duck[part], part


@pytest.mark.skipif(
    os.environ.get("DEDUP_SPARK_CORPUS", "") in ("", "0"),
    reason="chained-cluster DuckDB vs Spark comparison is opt-in: make test-spark (DEDUP_SPARK_CORPUS=1)",
)
def test_duckdb_and_spark_agree_on_long_chains(tmp_path):
    """Pages that each overlap the next (a sliding window of tokens) with shuffled ids: long chained
    clusters exercise the iterative components and hop distances; both engines give the same files."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(11)
    ids = [f"chain-{i:04d}" for i in rng.sample(range(10_000), 60)]
    rows = [
        {
            "doc_id": ids[i],
            "source": "chain",
            "domain": f"site{i % 4}.example",
            "crawled_at": f"2025-01-{1 + i % 28:02d}",
            "title": f"page {i}",
            "body": " ".join(f"word{j}" for j in range((i % 30) * 6, (i % 30) * 6 + 120)),
        }
        for i in range(60)
    ]
    corpus = tmp_path / "chains.parquet"
    pq.write_table(pa.Table.from_pylist(rows), corpus)
    duck_out, spark_out = tmp_path / "duckdb-output", tmp_path / "spark-output"
    corpus_vars = {"documents_path": str(corpus)}
    run_dbt(
        ["build"], db_path=tmp_path / "chains.duckdb", dbt_vars={**corpus_vars, "output_dir": str(duck_out)}
    )
    run_dbt_spark(
        ["build", "--exclude-resource-type", "unit_test"],
        work=tmp_path,
        dbt_vars={**corpus_vars, "output_dir": str(spark_out)},
    )
    clusters = list(csv.DictReader((duck_out / "clusters.csv").open()))
    assert max(int(r["cluster_size"]) for r in clusters) >= 20
    for name in ("clusters.csv", "duplicate_pairs.csv", "candidate_summary.csv", "cluster_inspection.csv"):
        assert (spark_out / name).read_text() == (duck_out / name).read_text(), name
    # the cluster means are exact (mean_of_ratios): the same to the last bit, not only approximately
    rows = list(csv.DictReader((spark_out / "cluster_inspection.csv").open()))
    assert len(rows) >= 20 and len({r["cluster_mean_edge_jaccard"] for r in rows}) > 1


def test_spark_refuses_a_csv_that_is_not_utf8_naming_the_doc_ids(tmp_path):
    """The same UTF-8 check as DuckDB's (macros/inputs/documents_input.sql): Spark's CSV reader would turn
    the bytes into U+FFFD silently."""
    path = tmp_path / "docs.csv"
    path.write_bytes(
        b"doc_id,source,domain,crawled_at,title,body\n"
        b"a,s,d1,2024-01-01,t,plain words only here\n"
        b"b,s,d2,2024-01-01,t,caf\xe9 au lait with some more words\n"
    )
    result = run_dbt_spark(
        ["build", "--select", "stg_documents"],
        work=tmp_path,
        dbt_vars={"documents_path": str(path), "output_dir": str(tmp_path / "out")},
        check=False,
    )
    assert result.returncode != 0
    assert (
        f"documents_path '{path}' holds bytes that are not UTF-8 in 1 row(s), doc_id: b; convert the file"
        " to UTF-8, or set var invalid_utf8: replace to read them as U+FFFD"
    ) in result.stdout
