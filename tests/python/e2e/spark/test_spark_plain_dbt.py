"""The standard `dbt` command on the Spark target (issue 15): no wrapper entry point.

`make spark-install` writes a .pth file (webdedup/engines/spark_plugin.py) that puts the project root on the
venv's sys.path, so dbt-core's plugin discovery imports `dbt_webdedup`, which registers the Spark
helpers.  Here the subprocess gets the same path through PYTHONPATH (what the .pth line does), and a
separate test checks that the .pth file written into a fresh venv makes `dbt_webdedup` importable.

* `dbt build --target spark` on the fixture gives the same output files as the DuckDB build.
* Without the plugin module on the path, the build stops at once with one line naming the fix.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.python.helpers.dbt_runner import DBT, PROJECT_ROOT, run_command, spark_env, spark_flags

pytest.importorskip("pyspark")
pytestmark = [
    pytest.mark.dbt,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java 17 (java not on PATH)"),
]

SAME_FILES = ("clusters.csv", "duplicate_pairs.csv", "candidate_summary.csv", "cluster_inspection.csv")


def _spark_env(work: Path, *, plugin_on_path: bool) -> dict:
    env = spark_env(work)
    env.pop("PYTHONPATH", None)
    if plugin_on_path:
        env["PYTHONPATH"] = str(PROJECT_ROOT)
    return env


@pytest.fixture(scope="module")
def plain_spark_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("plain_spark")
    command = [DBT, "build", *spark_flags("spark", work)]  # as the docs give it: no unit tests by default
    result = run_command(
        command,
        env=_spark_env(work, plugin_on_path=True),
        dbt_vars={"output_dir": str(work / "output")},
        check=True,
        label="dbt build --target spark",
    )
    return {"output_dir": work / "output", "log": result.stdout}


def test_plain_dbt_build_on_spark_gives_the_duckdb_files(plain_spark_run, fixture_run):
    import duckdb

    spark, duck = plain_spark_run["output_dir"], fixture_run["output_dir"]
    assert sorted(p.name for p in spark.iterdir()) == sorted(p.name for p in duck.iterdir())
    for name in SAME_FILES:
        assert (spark / name).read_text() == (duck / name).read_text(), name
    for name, key in (
        ("scored_pairs.parquet", "left_doc_id, right_doc_id"),
        ("deduped_documents.parquet", "doc_id"),
    ):
        query = "select * from '{}' order by " + key
        assert (
            duckdb.sql(query.format(spark / name)).fetchall()
            == duckdb.sql(query.format(duck / name)).fetchall()
        )
    assert "web_text_dedup: done" in plain_spark_run["log"]


def test_without_the_plugin_the_spark_build_stops_at_once_naming_the_fix(tmp_path):
    # dbt as the console script runs it, with the project root (PYTHONPATH, a .pth line, the cwd) removed
    # from sys.path, as in a venv where `make spark-install` has not run
    hide = (
        "import os, sys; root = os.path.abspath(sys.argv.pop(1)); "
        "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != root]; "
        "from dbt.cli.main import cli; sys.argv[0] = 'dbt'; sys.exit(cli())"
    )
    command = [sys.executable, "-c", hide, str(PROJECT_ROOT), "build", *spark_flags("spark", tmp_path)]
    result = run_command(
        command,
        env=_spark_env(tmp_path, plugin_on_path=False),
        dbt_vars={"output_dir": str(tmp_path / "output")},
        check=False,
        label="dbt build --target spark without the plugin",
    )
    assert result.returncode != 0
    message = (
        "the Spark target needs the project's dbt plugin (dbt_webdedup.py), which this venv does not load: "
        "run `make spark-install` once, or run dbt as "
        "`python -m webdedup.engines.dbt_spark build --target spark`"
    )
    assert message in result.stdout
    assert "START seed" not in result.stdout  # nothing ran
    assert not (tmp_path / "output").exists() or not any((tmp_path / "output").iterdir())


def test_the_pth_file_puts_the_plugin_module_on_a_venvs_path(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    written = subprocess.run(
        [python, "-m", "webdedup.engines.spark_plugin"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert written.returncode == 0, written.stderr
    pth = next((venv / "lib").glob("python3*/site-packages/web_text_dedup.pth"))
    assert pth.read_text() == f"{PROJECT_ROOT}\n"
    found = subprocess.run(
        [python, "-c", "import dbt_webdedup; print(dbt_webdedup.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert found.stdout.strip() == str(PROJECT_ROOT / "dbt_webdedup.py"), found.stderr
