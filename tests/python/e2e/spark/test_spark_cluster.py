"""Spark beyond one process: a standalone cluster (master + two workers, separate JVMs) and a Spark
Connect server, started and stopped by this module (webdedup/engines/spark_cluster.py).

For each of the targets spark_cluster (dbt's process is the driver of the standalone master) and
spark_connect (dbt is a Connect client): the fixture builds with every data test passing, and the fixture
and a generated 10,000-document corpus give the same output files as DuckDB (tests/python/helpers/
outputs.py: CSV and SVG byte for byte, Parquet the same types and rows to the bit, the manifest beyond
what names the run).  The cluster targets write outputs as folders of part files (var output_parts
defaults to on off a local master); the CSV parts, concatenated, are DuckDB's file byte for byte.

Opt-in (it starts five JVMs): DEDUP_SPARK_CLUSTER=1, as `make test-spark-cluster` (part of `make test`)
sets it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt, run_dbt_spark
from tests.python.helpers.outputs import csv_bytes, differences, part_files
from tests.python.helpers.project import data_tests, manifest_outputs
from tests.python.helpers.spec import SPEC_RESULT

pytest.importorskip("pyspark")
pytestmark = [
    pytest.mark.dbt,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17 (java not on PATH)"),
    pytest.mark.skipif(
        os.environ.get("DEDUP_SPARK_CLUSTER", "") in ("", "0"),
        reason="the standalone cluster and Connect server tests are opt-in: make test-spark-cluster",
    ),
]

TARGETS = ("spark_cluster", "spark_connect")
OUTPUTS = [*manifest_outputs(), "manifest.json"]
CORPUS_DOCS = int(os.environ.get("DEDUP_SPARK_CORPUS_DOCS", "10000"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from webdedup.engines import spark_cluster

    state = tmp_path_factory.mktemp("spark_cluster")
    os.environ["DEDUP_SPARK_CLUSTER_DIR"] = str(state)
    try:
        spark_cluster.up()
        yield state
    finally:
        print(spark_cluster.down())
        os.environ.pop("DEDUP_SPARK_CLUSTER_DIR", None)


def run_target(target: str, args: list[str], *, work: Path, dbt_vars: dict):
    return run_dbt_spark(
        args, work=work, target=target, dbt_vars=dbt_vars, schema=f"dedup_{work.name.replace('-', '_')}"
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("cluster_corpus")
    path = work / "corpus.parquet"
    subprocess.run(
        [sys.executable, "benchmarks/generate_corpus.py", "--docs", str(CORPUS_DOCS), "--out", str(path)],
        check=True,
        cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL,
    )
    output_dir = work / "duckdb-output"
    run_dbt(
        ["build", "--exclude-resource-type", "test", "unit_test"],
        db_path=work / "corpus.duckdb",
        dbt_vars={"documents_path": str(path), "output_dir": str(output_dir)},
    )
    return {"path": path, "duckdb_output": output_dir}


@pytest.mark.parametrize("target", TARGETS)
def test_the_fixture_on_the_cluster_passes_every_data_test_and_matches_duckdb(
    cluster, target, fixture_run, tmp_path
):
    output_dir = tmp_path / "output"
    run_target(
        target,
        ["build", "--exclude-resource-type", "unit_test"],
        work=tmp_path,
        dbt_vars={"output_dir": str(output_dir)},
    )
    results = json.loads((tmp_path / "dbt-target" / "run_results.json").read_text())["results"]
    statuses = {r["unique_id"]: r["status"] for r in results}
    assert {uid for uid in statuses if uid.startswith("test.")} == data_tests(tmp_path / "dbt-target")
    assert {uid: s for uid, s in statuses.items() if s not in ("pass", "success", "no-op")} == {}
    assert sorted(p.name for p in output_dir.iterdir()) == sorted(OUTPUTS)
    manifest = json.loads((output_dir / "manifest.json").read_text())
    assert {k: manifest["counts"][k] for k in SPEC_RESULT} == SPEC_RESULT
    assert (output_dir / "clusters.csv").is_dir()  # output_parts is on off a local master
    assert differences(fixture_run["output_dir"], output_dir, OUTPUTS) == []


@pytest.mark.parametrize("target", TARGETS)
def test_a_generated_corpus_on_the_cluster_matches_duckdb_file_for_file(cluster, target, corpus, tmp_path):
    output_dir = tmp_path / "output"
    run_target(
        target,
        ["build", "--exclude-resource-type", "test", "unit_test"],
        work=tmp_path,
        dbt_vars={"documents_path": str(corpus["path"]), "output_dir": str(output_dir)},
    )
    duck = corpus["duckdb_output"]
    assert differences(duck, output_dir, OUTPUTS) == []
    # many tasks wrote the big outputs, and their parts hold DuckDB's rows in DuckDB's order
    assert len(part_files(output_dir / "scored_pairs.parquet")) > 1
    assert len(part_files(output_dir / "duplicate_pairs.csv")) > 1
    assert csv_bytes(output_dir / "cluster_inspection.csv") == (duck / "cluster_inspection.csv").read_bytes()
