"""One corpus on every engine: DuckDB, local Spark, the standalone cluster and Spark Connect.

    python benchmarks/engines_benchmark.py [--docs 100000] [--work bench_work/engines] [--json engines.json]
        [--targets duckdb,spark,spark_cluster,spark_connect]

Generates (or reuses) the corpus of ``benchmarks/generate_corpus.py``, runs ``dbt build`` (data tests
included, unit tests excluded on Spark as in ``make run-spark``) on each target one after the other,
starting the standalone cluster and the Connect server of ``make spark-up`` for the cluster targets (and
stopping them after), and prints per target: wall time, the slowest dbt nodes (run_results.json) and,
from Spark's event log, the stage time, the slowest stages and the stages that read more than 1,000 rows
in a single task.  Every target's output files are compared with DuckDB's
(``tests/python/helpers/outputs.py``: CSV and SVG byte for byte, Parquet rows and types, the manifest
beyond its run keys).  Use ``--docs 1000000`` for the opt-in 1M run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import run_benchmark as rb  # noqa: E402
from benchmarks.spark_stages import label, stages  # noqa: E402
from tests.python.helpers.dbt_runner import spark_env, spark_flags  # noqa: E402
from tests.python.helpers.outputs import differences  # noqa: E402
from tests.python.helpers.project import manifest_outputs  # noqa: E402

TARGETS = ("duckdb", "spark", "spark_cluster", "spark_connect")
CLUSTER_TARGETS = ("spark_cluster", "spark_connect")
OUTPUTS = [*manifest_outputs(), "manifest.json"]


def run_target(target: str, corpus: Path, work: Path, event_log: Path) -> dict:
    """Build ``corpus`` on ``target`` with its state and outputs under ``work/<target>``."""
    folder = work / target
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    output = folder / "output"
    dbt_vars = {"documents_path": str(corpus), "output_dir": str(output)}
    if target == "duckdb":
        env = {**os.environ, "DEDUP_DB_PATH": str(folder / "bench.duckdb"), "DEDUP_PUBLISH_DIR": "none"}
        command = [rb.dbt_executable(), "build", "--profiles-dir", ".", "--project-dir", ".",
                   "--target-path", str(folder / "dbt-target")]  # fmt: skip
    else:
        env = spark_env(folder, schema=f"bench_{target}")
        env["DEDUP_SPARK_EVENT_LOG"] = str(event_log / target)
        (event_log / target).mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "webdedup.engines.dbt_spark", "build",
                   "--exclude-resource-type", "unit_test", *spark_flags(target, folder)]  # fmt: skip
    started = time.perf_counter()
    with open(folder / "dbt.log", "w", encoding="utf-8") as log:
        code = subprocess.run(
            [*command, "--vars", json.dumps(dbt_vars)],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        ).returncode
    result = {"target": target, "wall_seconds": round(time.perf_counter() - started, 1), "returncode": code}
    run_results = folder / "dbt-target" / "run_results.json"
    if run_results.exists():
        nodes = json.loads(run_results.read_text())["results"]
        result["slowest_nodes"] = sorted(
            ((n["unique_id"].split(".")[-1], round(n["execution_time"], 1)) for n in nodes),
            key=lambda x: -x[1],
        )[:6]
        result["failed_nodes"] = [n["unique_id"] for n in nodes if n["status"] not in ("pass", "success")]
    logs = (
        sorted((event_log / target).glob("*"), key=lambda p: p.stat().st_mtime) if target != "duckdb" else []
    )
    if logs:
        found = stages(logs[-1])
        result["stages"] = len(found)
        result["stage_seconds"] = round(sum(s["seconds"] for s in found), 1)
        result["slowest_stages"] = sorted(found, key=lambda s: -s["seconds"])[:5]
        result["single_task_stages"] = [s for s in found if s["tasks"] == 1 and s["records"] > 1000]
    result["output"] = str(output)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--work", type=Path, default=ROOT / "bench_work" / "engines")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    targets = [t for t in args.targets.split(",") if t]
    if "duckdb" not in targets:
        parser.error("--targets must include duckdb (the other outputs are compared with its)")
    corpus = rb.ensure_corpus(args.work / str(args.docs), args.docs, seed=7, hot_bucket=0)
    print(f"corpus: {corpus['path']} ({args.docs:,} documents)", flush=True)
    event_log = args.work / "event-logs"
    results = []
    cluster_state = args.work / "spark-cluster"
    started_cluster = False
    try:
        for target in targets:
            if target in CLUSTER_TARGETS and not started_cluster:
                from webdedup.engines import spark_cluster

                os.environ["DEDUP_SPARK_CLUSTER_DIR"] = str(cluster_state)
                os.environ["DEDUP_SPARK_EVENT_LOG"] = str(event_log / "spark_connect")
                (event_log / "spark_connect").mkdir(parents=True, exist_ok=True)
                print(spark_cluster.up(), flush=True)
                started_cluster = True
            print(f"[{target}] dbt build ...", flush=True)
            results.append(run_target(target, Path(corpus["path"]), args.work, event_log))
    finally:
        if started_cluster:
            from webdedup.engines import spark_cluster

            print(spark_cluster.down(), flush=True)
    duck = Path(results[0]["output"])
    for result in results:
        if result["target"] != "duckdb":
            result["differences"] = differences(duck, Path(result["output"]), OUTPUTS)
    print(report(results, args.docs))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    bad = [r for r in results if r["returncode"] != 0 or r.get("differences") or r.get("single_task_stages")]
    return 1 if bad else 0


def report(results: list[dict], docs: int) -> str:
    header = f"{'target':<15} {'wall s':>8} {'x DuckDB':>9} {'stages':>7} {'stage s':>8}  outputs"
    lines = [f"\n{docs:,} documents, dbt build per target (outputs compared with DuckDB's)\n", header]
    base = results[0]["wall_seconds"]
    for r in results:
        same = "-" if r["target"] == "duckdb" else ("identical" if not r.get("differences") else "DIFFER")
        if r["returncode"] != 0:
            same = f"build failed (exit {r['returncode']}): {r.get('failed_nodes')}"
        lines.append(
            f"{r['target']:<15} {r['wall_seconds']:>8.1f} {r['wall_seconds'] / base:>9.1f} "
            f"{r.get('stages', '-'):>7} {r.get('stage_seconds', '-'):>8}  {same}"
        )
    for r in results:
        lines.append(
            f"\n[{r['target']}] slowest dbt nodes: "
            + ", ".join(f"{n} {s}s" for n, s in r.get("slowest_nodes", []))
        )
        for s in r.get("slowest_stages", []):
            lines.append(
                f"  stage {s['id']:>5}: {s['seconds']:>6.1f} s, {s['tasks']} task(s), {s['records']:,} rows"
                f"  {label(s)}"
            )
        if "single_task_stages" in r:
            lines.append(f"  stages reading > 1,000 rows in one task: {len(r['single_task_stages'])}")
            for s in r["single_task_stages"]:
                lines.append(f"    stage {s['id']}: {s['records']:,} rows  {label(s)}")
        for d in r.get("differences", []):
            lines.append(f"  differs: {d}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
