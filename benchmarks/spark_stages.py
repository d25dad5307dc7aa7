"""The slowest Spark stages of a run, and the stages that ran in one task, from Spark's event log.

Run a Spark target with the event log on (``DEDUP_SPARK_EVENT_LOG=<folder>``: profiles spark_cluster and
spark_cluster write it there), then::

    python benchmarks/spark_stages.py <folder or event log file> [--top 15]

It prints the stages by duration (id, tasks, seconds, records read, what Spark names the stage: the
call site, which for dbt's SQL is the statement's first line) and every stage that ran in one task while
reading more than ``--records`` rows (default 1,000): the stages that do not scale out.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

RECORDS = ("internal.metrics.input.recordsRead", "internal.metrics.shuffle.read.recordsRead")


def lines(event_log: Path):
    """The JSON lines of an event log: a file, or Spark 4's rolling folder of events_<n>_* files;
    .zstd files need the zstandard package (the profile writes them uncompressed)."""
    files = [event_log]
    if event_log.is_dir():
        files = sorted(event_log.glob("events_*"), key=lambda p: int(p.name.split("_")[1]))
    for path in files:
        if path.suffix == ".zstd":
            import io

            import zstandard

            with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as reader:
                yield from io.TextIOWrapper(reader, encoding="utf-8")
        else:
            with path.open(encoding="utf-8") as handle:
                yield from handle


NODE_ID = re.compile(r'node_id\\*"\s*:\s*\\*"([^"\\]+)')


def stages(event_log: Path) -> list[dict]:
    """One dict per completed stage: id, name, node, tasks, seconds, records (input + shuffle rows read).

    ``node`` is the dbt node whose statement ran the stage, read from the query comment dbt puts first
    in every statement (``"node_id": ...``) through the stage's job and SQL execution; None for stages
    outside a dbt statement (a Python model's DataFrame calls).  ``name`` is Spark's own (the call site,
    or on Connect the session id)."""
    node_of_execution: dict[str, str] = {}
    execution_of_stage: dict[int, str] = {}
    found = []
    for line in lines(event_log):
        event = json.loads(line)
        kind = event.get("Event", "")
        if kind.endswith("SQLExecutionStart"):
            match = NODE_ID.search(event.get("details", "") + event.get("description", ""))
            if match:
                node_of_execution[str(event["executionId"])] = match.group(1).split(".", 2)[-1]
        elif kind == "SparkListenerJobStart":
            properties = event.get("Properties") or {}
            execution = properties.get("spark.sql.execution.root.id") or properties.get(
                "spark.sql.execution.id"
            )
            for stage in event.get("Stage IDs", []):
                execution_of_stage[stage] = str(execution)
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            if "Completion Time" not in info or "Submission Time" not in info:
                continue
            records = sum(
                int(a.get("Value", 0)) for a in info.get("Accumulables", []) if a.get("Name") in RECORDS
            )
            found.append(
                {
                    "id": info["Stage ID"],
                    "name": info["Stage Name"].split("\n")[0][:90],
                    "node": node_of_execution.get(execution_of_stage.get(info["Stage ID"], "")),
                    "tasks": info["Number of Tasks"],
                    "seconds": (info["Completion Time"] - info["Submission Time"]) / 1000,
                    "records": records,
                }
            )
    return found


def label(stage: dict) -> str:
    """The dbt node of a stage when known, else Spark's name for it."""
    return stage["node"] or stage["name"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--records", type=int, default=1000)
    args = parser.parse_args()
    is_log = args.path.is_file() or args.path.name.startswith("eventlog_")
    logs = [args.path] if is_log else sorted(args.path.iterdir(), key=lambda p: p.stat().st_mtime)
    rows = stages(logs[-1])
    total = sum(r["seconds"] for r in rows)
    print(f"{logs[-1].name}: {len(rows)} stages, {total:.1f} s of stage time")
    print(f"{'stage':>6} {'tasks':>6} {'seconds':>8} {'records':>11}  name")
    for row in sorted(rows, key=lambda r: -r["seconds"])[: args.top]:
        print(f"{row['id']:>6} {row['tasks']:>6} {row['seconds']:>8.1f} {row['records']:>11,}  {label(row)}")
    single = [r for r in rows if r["tasks"] == 1 and r["records"] > args.records]
    print(f"\nstages in one task reading more than {args.records:,} rows: {len(single)}")
    for row in sorted(single, key=lambda r: -r["records"]):
        print(f"{row['id']:>6} {row['tasks']:>6} {row['seconds']:>8.1f} {row['records']:>11,}  {label(row)}")


if __name__ == "__main__":
    main()
