"""Run dbt from the project root into a throwaway database and output folder."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from webdedup.outputs.files import own_build_file

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DBT = str(Path(sys.executable).with_name("dbt"))


def run_dbt(args: list[str], *, db_path: Path, dbt_vars: dict | None = None, check: bool = True):
    """Run `dbt <args>` from the project root; returns the CompletedProcess (stdout+stderr merged)."""
    env = dict(
        os.environ,
        DEDUP_DB_PATH=str(db_path),
        DEDUP_PUBLISH_DIR=str(db_path.parent / "published"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    command = [DBT, *args, "--profiles-dir", str(PROJECT_ROOT), "--project-dir", str(PROJECT_ROOT)]
    return run_command(command, env=env, dbt_vars=dbt_vars, check=check, label=f"dbt {' '.join(args)}")


@contextlib.contextmanager
def edit_build_file(db_path: Path):
    """A read-write connection to the build file, behind dbt's back.  A successful build shares its file
    with the published database (a hard link), and a write to the shared file makes the next build a full
    one (webdedup/outputs/files.py); so the file first becomes the build's own, as the next dbt command
    would make it."""
    own_build_file(str(db_path))
    with duckdb.connect(str(db_path)) as con:
        yield con


def stored_failures(database: Path, select: str, columns: str):
    """`dbt test --select <select> --store-failures` on ``database`` (outputs beside it); returns the
    CompletedProcess and ``columns`` of every row the failing tests stored, sorted."""
    result = run_dbt(
        ["test", "--select", select, "--store-failures"],
        db_path=database,
        dbt_vars={"output_dir": str(database.parent / "output")},
        check=False,
    )
    with duckdb.connect(str(database), read_only=True) as con:
        tables = con.execute(
            "select table_name from duckdb_tables() where schema_name = 'main_dbt_test__audit'"
        ).fetchall()
        rows = [
            row
            for (table,) in tables
            for row in con.sql(f'select {columns} from main_dbt_test__audit."{table}"').fetchall()
        ]
    return result, sorted(rows)


def build_table(work: Path, table, **dbt_vars):
    """`dbt build` on ``table`` as the input: written to work/docs.parquet, database work/db.duckdb,
    outputs in work/out, plus ``dbt_vars``."""
    pq.write_table(table, work / "docs.parquet")
    documents = {"documents_path": str(work / "docs.parquet"), "output_dir": str(work / "out")}
    return run_dbt(["build"], db_path=work / "db.duckdb", dbt_vars={**documents, **dbt_vars})


def run_command(command: list[str], *, env: dict, dbt_vars: dict | None, check: bool, label: str):
    """Run a dbt command line (with ``--vars`` when given) from the project root, stdout+stderr merged;
    with ``check``, a failure raises with the end of the log."""
    if dbt_vars:
        command = [*command, "--vars", json.dumps(dbt_vars)]
    result = subprocess.run(
        command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{label} failed:\n{result.stdout[-8000:]}")
    return result


def spark_env(work: Path, *, schema: str | None = None) -> dict:
    """The environment of a Spark build whose warehouse and metastore live under ``work`` (and, for a
    cluster shared by several builds, its own schema)."""
    env = dict(
        os.environ,
        DEDUP_SPARK_WAREHOUSE=str(work / "spark-warehouse"),
        DEDUP_SPARK_METASTORE=str(work / "spark-metastore"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    if schema:
        env["DEDUP_SPARK_SCHEMA"] = schema
    return env


def spark_flags(target: str, work: Path) -> list[str]:
    """dbt's flags for a Spark target run from the project root, its target folder under ``work``."""
    return [
        "--target",
        target,
        "--profiles-dir",
        str(PROJECT_ROOT),
        "--project-dir",
        str(PROJECT_ROOT),
        "--target-path",
        str(work / "dbt-target"),
    ]


def run_dbt_spark(
    args: list[str],
    *,
    work: Path,
    target: str = "spark",
    dbt_vars: dict | None = None,
    check: bool = True,
    schema: str | None = None,
):
    """`python -m webdedup.engines.dbt_spark <args> --target <target>` from the project root, state under
    ``work``."""
    command = [sys.executable, "-m", "webdedup.engines.dbt_spark", *args, *spark_flags(target, work)]
    return run_command(
        command,
        env=spark_env(work, schema=schema),
        dbt_vars=dbt_vars,
        check=check,
        label=f"dbt ({target}) {' '.join(args)}",
    )
