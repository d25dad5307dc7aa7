"""Benchmark the dbt pipeline against the datasketch and rensa baselines on one generated corpus.

One invocation generates (or reuses) a corpus with ``benchmarks/generate_corpus.py`` and runs, on that same
file, each engine in its own subprocess:

* ``dbt``        - the full ``dbt build`` (without its tests with ``--skip-build-tests``) of this project;
* ``datasketch`` - ``benchmarks.baselines.run_datasketch`` (through a small child runner of this script);
* ``rensa``      - ``benchmarks.baselines.run_rensa`` (same runner).

For every engine it measures the wall time of the subprocess and the peak RSS of its process tree
(``/usr/bin/time -v`` when it exists, else psutil polling every 0.2 s of the summed RSS of the child and
its descendants).  It prints throughput (documents/s and MB/s of UTF-8 body text, 1 MB = 1e6 bytes; peak
RSS is reported in the same decimal MB), dbt's per-stage times from ``run_results.json`` with each stage's
CPU seconds (``benchmarks/stage_cpu.py``: on two cores the build is CPU-bound, so a stage's CPU is what
changing it can save) and an agreement check between dbt and each baseline:

* exactness: every pair accepted by any engine, and every candidate dbt scored, is re-scored with the
  spec's reference functions (``webdedup.core.reference``); an accepted pair below the threshold, or a dbt
  Jaccard / decision that differs from the reference, is a *disagreement*;
* pairs: MinHash implementations differ, so LSH candidates differ.  Pairs are compared raw and as *pair
  classes* (documents with identical reference shingle sets collapsed, which undoes dbt's star form); a
  class accepted by one side only, with reference Jaccard >= threshold, is an *LSH miss* of the other;
* clusters: on the graph of all accepted pairs, documents whose component contains only pair classes found
  by both engines must be in exactly that cluster on both sides; components touched by an LSH miss are
  counted, not failed.

The check prints PASS unless there is a real disagreement (LSH misses never fail it).

Usage::

    python benchmarks/run_benchmark.py --docs N [--hot-bucket K] [--seed 7] [--work bench_work/N]
        [--engines dbt,datasketch,rensa] [--threads 2] [--memory-limit 8GB] [--json results.json]
        [--skip-build-tests] [--rss auto|time|psutil] [--incremental 0.01,0.1] [--incremental-outputs]
        [--dbt-threads 1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # make ``benchmarks``, ``webdedup`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import generate_corpus, stage_cpu
from benchmarks.baselines import UnionFind
from webdedup.core.reference import jaccard, normalize_text, token_shingles
from webdedup.engines import duckdb_memory as memory

ROOT = Path(__file__).resolve().parents[1]

ENGINES = ("dbt", "datasketch", "rensa")
BASELINES = ("datasketch", "rensa")
THRESHOLD = 0.7
JACCARD_TOLERANCE = 1e-9
POLL_SECONDS = 0.2
GNU_TIME = Path("/usr/bin/time")
PROJECT = "web_text_dedup"
MAX_EXAMPLES = 5

# --------------------------------------------------------------------------------------------------------
# Corpus (generated once per work dir, reused while the arguments are unchanged)
# --------------------------------------------------------------------------------------------------------


def project_memory_limit() -> str:
    """DuckDB's memory limit of a build without DEDUP_MEMORY_LIMIT on this machine
    (webdedup/engines/duckdb_memory.py)."""
    return memory.default_memory_limit(memory.machine_memory_bytes())


def corpus_args(docs: int, seed: int, hot_bucket: int) -> dict:
    """The arguments that determine the corpus bytes (the generator's defaults for everything else)."""
    return {
        "docs": docs,
        "seed": seed,
        "hot_bucket": hot_bucket,
        "near_threshold_share": generate_corpus.DEFAULT_NEAR_THRESHOLD_SHARE,
        "group_share": generate_corpus.DEFAULT_GROUP_SHARE,
        "row_group_size": generate_corpus.DEFAULT_ROW_GROUP_SIZE,
        "generator_version": generate_corpus.GENERATOR_VERSION,
    }


def corpus_stats(path: Path) -> dict:
    """Number of documents and total UTF-8 bytes of the body column (read a batch at a time: the body
    column of 10M pages is ~36 GB)."""
    documents = body_bytes = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536, columns=["body"]):
        documents += batch.num_rows
        body_bytes += pc.sum(pc.binary_length(batch.column(0))).as_py() or 0
    return {"documents": documents, "body_bytes": int(body_bytes)}


def ensure_corpus(work: Path, docs: int, seed: int, hot_bucket: int, workers: int = 1) -> dict:
    """Generate ``work/corpus.parquet`` unless the sidecar ``corpus.json`` shows the same arguments."""
    path, sidecar = work / "corpus.parquet", work / "corpus.json"
    wanted = corpus_args(docs, seed, hot_bucket)
    if path.exists() and sidecar.exists():
        try:
            info = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
        if info.get("args") == wanted and info.get("bytes") == path.stat().st_size and "stats" in info:
            return {**info, "path": str(path), "reused": True}
    work.mkdir(parents=True, exist_ok=True)
    sidecar.unlink(missing_ok=True)
    partial = work / "corpus.parquet.partial"
    started = time.perf_counter()
    summary = generate_corpus.write_corpus(
        partial,
        docs,
        seed=seed,
        hot_bucket=hot_bucket,
        near_threshold_share=wanted["near_threshold_share"],
        group_share=wanted["group_share"],
        row_group_size=wanted["row_group_size"],
        workers=workers,
    )
    os.replace(partial, path)
    info = {
        "args": wanted,
        "bytes": path.stat().st_size,
        "sources": summary["sources"],
        "generated_seconds": round(time.perf_counter() - started, 3),
        "stats": corpus_stats(path),
    }
    sidecar.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return {**info, "path": str(path), "reused": False}


# --------------------------------------------------------------------------------------------------------
# Measuring a subprocess: wall time and peak RSS of its process tree
# --------------------------------------------------------------------------------------------------------


def gnu_time_available() -> bool:
    """True when ``/usr/bin/time`` is GNU time (``-v`` reports the maximum resident set size)."""
    if not (GNU_TIME.is_file() and os.access(GNU_TIME, os.X_OK)):
        return False
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        try:
            subprocess.run(
                [str(GNU_TIME), "-v", "-o", report.name, "true"],
                check=True,
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return "Maximum resident set size" in Path(report.name).read_text(encoding="utf-8", errors="replace")


def resolve_rss_method(requested: str) -> str:
    if requested == "auto":
        return "time" if gnu_time_available() else "psutil"
    if requested == "time" and not gnu_time_available():
        raise SystemExit("--rss time: /usr/bin/time -v is not available on this machine")
    return requested


def _tree_rss(process) -> int:
    import psutil

    total = 0
    try:
        members = [process, *process.children(recursive=True)]
    except psutil.Error:
        return 0
    for member in members:
        with contextlib.suppress(psutil.Error):
            total += member.memory_info().rss
    return total


def run_measured(
    command: list[str], *, env: dict, cwd: Path, log_path: Path, rss_method: str, cpu_trace: bool = False
) -> dict:
    """Run ``command``; stdout and stderr go to ``log_path``.  Returns wall seconds, peak RSS and status;
    with ``cpu_trace`` also the process tree's CPU seconds sampled over time (benchmarks/stage_cpu.py)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    time_report = log_path.with_suffix(".time.txt")
    if rss_method == "time":
        command = [str(GNU_TIME), "-v", "-o", str(time_report), *command]
    peak = 0
    # CPU time of the process tree: what the waited-for children used (this script runs one command at a time)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log_path, "wb") as log:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        trace = stage_cpu.CpuTrace(child.pid).start() if cpu_trace else None
        if rss_method == "psutil":
            import psutil

            process = psutil.Process(child.pid)
            while child.poll() is None:
                peak = max(peak, _tree_rss(process))
                time.sleep(POLL_SECONDS)
        returncode = child.wait()
        wall = time.perf_counter() - started
    samples = trace.stop() if trace else None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rss_method == "time":
        text = time_report.read_text(encoding="utf-8", errors="replace") if time_report.exists() else ""
        found = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
        peak = int(found.group(1)) * 1024 if found else 0
    return {
        "command": command,
        "returncode": returncode,
        "wall_seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "peak_rss_mb": round(peak / 1e6, 1) if peak else None,
        "rss_method": "/usr/bin/time -v" if rss_method == "time" else f"psutil tree sum / {POLL_SECONDS}s",
        "log": str(log_path),
        **({"cpu_trace": samples} if cpu_trace else {}),
    }


def _log_tail(path: str, lines: int = 25) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# --------------------------------------------------------------------------------------------------------
# dbt
# --------------------------------------------------------------------------------------------------------


def dbt_executable() -> str:
    beside = Path(sys.executable).parent / "dbt"
    if beside.exists():
        return str(beside)
    found = shutil.which("dbt")
    if not found:
        raise SystemExit("dbt executable not found (run with the project's .venv/bin/python)")
    return found


def clear_build(work: Path) -> None:
    """Remove an earlier build in ``work``: database, outputs and the published database (an earlier run's
    would count in the disk figures of one without publishing)."""
    database = work / "bench.duckdb"
    for stale in (database, Path(f"{database}.wal")):
        stale.unlink(missing_ok=True)
    for folder in (work / "output", work / "published"):
        shutil.rmtree(folder, ignore_errors=True)


def run_dbt(
    corpus: Path | None,
    work: Path,
    *,
    threads: int,
    memory_limit: str,
    skip_tests: bool,
    rss_method: str,
    fresh: bool = True,
    extra_vars: dict | None = None,
    publish: bool = True,
    dbt_threads: int | None = None,
) -> dict:
    """``dbt build`` (tests excluded with skip_tests) on ``corpus`` (None: the project's seed `documents`,
    or the input ``extra_vars`` name, such as warc_paths); database, target, outputs in ``work``.
    ``fresh``: start from an empty database and output folder (else an incremental build on top).
    ``dbt_threads``: dbt's --threads (None: the profile's).  Each stage's CPU seconds come from a trace
    of the build's processes (benchmarks/stage_cpu.py)."""
    database, target, output = work / "bench.duckdb", work / "target", work / "output"
    work.mkdir(parents=True, exist_ok=True)
    (target / "run_results.json").unlink(missing_ok=True)
    if fresh:
        clear_build(work)
    dbt_vars = {"output_dir": str(output), "fingerprint_workers": threads}
    if corpus is not None:
        dbt_vars["documents_path"] = str(corpus)
    dbt_vars.update(extra_vars or {})
    command = [
        dbt_executable(),
        "build",
        *(["--exclude-resource-type", "test", "--exclude-resource-type", "unit_test"] if skip_tests else []),
        *(["--threads", str(dbt_threads)] if dbt_threads else []),
        "--profiles-dir",
        ".",
        "--project-dir",
        ".",
        "--target-path",
        str(target),
        "--log-path",
        str(work / "logs"),
        "--vars",
        json.dumps(dbt_vars),
    ]
    env = {
        **os.environ,
        "DEDUP_DB_PATH": str(database),
        # the default publish step (the analysts' database: a hard link, or a copy) is part of the build
        "DEDUP_PUBLISH_DIR": str(work / "published") if publish else "none",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    # no --memory-limit: the project's default (webdedup/engines/duckdb_memory.py), not one inherited from
    # this shell
    env.pop("DEDUP_MEMORY_LIMIT", None)
    if memory_limit:
        env["DEDUP_MEMORY_LIMIT"] = memory_limit
    # Parse first (untimed in wall s, reported as parse_seconds): every build after the first in a
    # project reuses dbt's partial parse, so the measured build is the one users repeat.
    parse_command = [command[0], "parse", *command[command.index("--profiles-dir") :]]
    # (dbt parse takes no --threads: everything from --profiles-dir on is shared)
    started = time.perf_counter()
    subprocess.run(parse_command, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    parse_seconds = time.perf_counter() - started
    result = run_measured(
        command, env=env, cwd=ROOT, log_path=work / "dbt.log", rss_method=rss_method, cpu_trace=True
    )
    samples = result.pop("cpu_trace")
    result["parse_seconds"] = parse_seconds
    result["engine"] = "dbt"
    result["label"] = "dbt build (no tests)" if skip_tests else "dbt build"
    result["command_kind"] = "build without tests" if skip_tests else "build"
    result["output_dir"] = str(output)
    run_results = target / "run_results.json"
    if run_results.exists():
        result.update(dbt_stage_times(run_results, target / "manifest.json", samples))
    return result


def pipeline_order(stage_ids: list[str], parent_map: dict, run_order: list[str]) -> list[str]:
    """Topological order of the stages (dbt's parent_map), ties broken by the order dbt ran them."""
    rank = {uid: index for index, uid in enumerate(run_order)}
    pending = set(stage_ids)
    parents = {uid: set(parent_map.get(uid, ())) for uid in stage_ids}
    ordered: list[str] = []
    while pending:
        ready = [uid for uid in pending if not parents[uid] & pending] or list(pending)  # cycle guard
        chosen = min(ready, key=lambda uid: (rank.get(uid, len(rank)), uid))
        ordered.append(chosen)
        pending.remove(chosen)
    return ordered


def dbt_stage_times(run_results_path: Path, manifest_path: Path, cpu_samples: list | None = None) -> dict:
    """Per-model (and seed) execution times in pipeline order, the summed test time and the node status;
    with ``cpu_samples`` (stage_cpu.CpuTrace) also each stage's, the tests' and the rest's CPU seconds."""
    run_results = json.loads(run_results_path.read_text(encoding="utf-8"))
    results = run_results["results"]
    cpu, outside = stage_cpu.attribute(cpu_samples or [], stage_cpu.node_windows(run_results))
    run_order = [item["unique_id"] for item in results]
    parent_map: dict = {}
    if manifest_path.exists():
        parent_map = json.loads(manifest_path.read_text(encoding="utf-8")).get("parent_map", {})
    times = {item["unique_id"]: float(item["execution_time"] or 0.0) for item in results}
    stage_ids = [uid for uid in run_order if uid.split(".")[0] in ("model", "seed", "snapshot")]
    stages = [
        {
            "unique_id": uid,
            "name": uid.split(".")[-1],
            "kind": uid.split(".")[0],
            "seconds": round(times[uid], 4),
            **({"cpu_seconds": round(cpu.get(uid, 0.0), 3)} if cpu_samples else {}),
        }
        for uid in pipeline_order(stage_ids, parent_map, run_order)
    ]
    data_tests = [uid for uid in run_order if uid.startswith("test.")]
    unit_tests = [uid for uid in run_order if uid.startswith("unit_test.")]
    statuses = Counter(str(item["status"]) for item in results)
    failed = [
        item["unique_id"] for item in results if str(item["status"]) in ("error", "fail", "runtime error")
    ]
    return {
        "stages": stages,
        "models_seconds": round(sum(stage["seconds"] for stage in stages), 4),
        "data_tests": len(data_tests),
        "unit_tests": len(unit_tests),
        "data_test_seconds": round(sum(times[uid] for uid in data_tests), 4),
        "unit_test_seconds": round(sum(times[uid] for uid in unit_tests), 4),
        "test_seconds": round(sum(times[uid] for uid in data_tests + unit_tests), 4),
        **(
            {
                "test_cpu_seconds": round(sum(cpu.get(uid, 0.0) for uid in data_tests + unit_tests), 3),
                "other_cpu_seconds": round(
                    outside
                    + sum(
                        cpu.get(uid, 0.0)
                        for uid in run_order
                        if uid.split(".")[0] not in ("model", "seed", "snapshot", "test", "unit_test")
                    ),
                    3,
                ),
            }
            if cpu_samples
            else {}
        ),
        "elapsed_seconds": round(float(run_results.get("elapsed_time") or 0.0), 3),
        "node_status": dict(sorted(statuses.items())),
        "failed_nodes": failed,
    }


def _read_csv_strings(path: Path, columns: list[str]) -> pa.Table:
    options = pa_csv.ConvertOptions(
        include_columns=columns,
        column_types={column: pa.string() for column in columns if column.endswith("doc_id")}
        | {column: pa.string() for column in columns if column == "cluster_id"},
    )
    return pa_csv.read_csv(path, convert_options=options)


def _ordered(left: str, right: str) -> tuple[str, str]:
    return (left, right) if left <= right else (right, left)


def read_dbt_outputs(output_dir: Path) -> dict:
    """clusters (doc_id -> cluster_id), accepted pairs (pair -> jaccard), scored candidates."""
    clusters_table = _read_csv_strings(output_dir / "clusters.csv", ["cluster_id", "doc_id"])
    clusters = dict(
        zip(
            clusters_table.column("doc_id").to_pylist(),
            clusters_table.column("cluster_id").to_pylist(),
            strict=True,
        )
    )
    pairs_table = _read_csv_strings(
        output_dir / "duplicate_pairs.csv", ["left_doc_id", "right_doc_id", "jaccard"]
    )
    pairs = {
        _ordered(left, right): float(value)
        for left, right, value in zip(
            pairs_table.column("left_doc_id").to_pylist(),
            pairs_table.column("right_doc_id").to_pylist(),
            pairs_table.column("jaccard").to_pylist(),
            strict=True,
        )
    }
    scored_table = pq.read_table(
        output_dir / "scored_pairs.parquet",
        columns=["left_doc_id", "right_doc_id", "jaccard", "is_duplicate"],
    )
    scored = {
        _ordered(left, right): (float(value), bool(flag))
        for left, right, value, flag in zip(
            scored_table.column("left_doc_id").to_pylist(),
            scored_table.column("right_doc_id").to_pylist(),
            scored_table.column("jaccard").to_pylist(),
            scored_table.column("is_duplicate").to_pylist(),
            strict=True,
        )
    }
    return {"clusters": clusters, "pairs": pairs, "scored": scored}


# --------------------------------------------------------------------------------------------------------
# Baselines (each in its own subprocess: this script re-invoked as a child runner)
# --------------------------------------------------------------------------------------------------------


def baseline_child(engine: str, corpus: str, dump: str) -> int:
    """Child runner: run one baseline and dump its summary, clusters and duplicate pairs as JSON."""
    from benchmarks import baselines

    runner = {"datasketch": baselines.run_datasketch, "rensa": baselines.run_rensa}[engine]
    result = runner(corpus, threshold=THRESHOLD)
    payload = {
        "summary": baselines.summary(result),
        "clusters": result["clusters"],
        "representatives": result["representatives"],
        "duplicate_pairs": sorted(result["duplicate_pairs"]),
    }
    partial = Path(f"{dump}.partial")
    partial.write_text(json.dumps(payload), encoding="utf-8")
    os.replace(partial, dump)
    print(json.dumps(payload["summary"], indent=2))
    return 0


def run_baseline(engine: str, corpus: Path, work: Path, *, threads: int, rss_method: str) -> dict:
    dump = work / f"{engine}_result.json"
    dump.unlink(missing_ok=True)
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--baseline-child",
        engine,
        "--baseline-corpus",
        str(corpus),
        "--baseline-dump",
        str(dump),
    ]
    env = {**os.environ, "RAYON_NUM_THREADS": str(threads)}
    result = run_measured(command, env=env, cwd=ROOT, log_path=work / f"{engine}.log", rss_method=rss_method)
    result["engine"] = engine
    result["label"] = engine
    result["dump"] = str(dump)
    if result["returncode"] == 0 and dump.exists():
        payload = json.loads(dump.read_text(encoding="utf-8"))
        result["summary"] = payload["summary"]
        result["elapsed_seconds"] = payload["summary"]["total_seconds"]
    return result


def read_baseline_outputs(dump: Path) -> dict:
    payload = json.loads(Path(dump).read_text(encoding="utf-8"))
    return {
        "clusters": payload["clusters"],
        "pairs": {_ordered(left, right) for left, right in payload["duplicate_pairs"]},
    }


# --------------------------------------------------------------------------------------------------------
# Agreement check
# --------------------------------------------------------------------------------------------------------


def partition_differences(left: dict, right: dict) -> int:
    """Number of items whose block (set of items with the same label) differs between two labelings."""
    left_size, right_size = Counter(left.values()), Counter(right.values())
    both = Counter((left[item], right.get(item)) for item in left)
    return sum(
        1
        for item in left
        if not (
            left_size[left[item]]
            == right_size.get(right.get(item), -1)
            == both[(left[item], right.get(item))]
        )
    )


def components_of(items, pairs) -> dict:
    forest = UnionFind(items)
    for left, right in pairs:
        forest.union(left, right)
    return {item: forest.find(item) for item in items}


class ReferenceScorer:
    """Reference shingle sets of the documents that matter, Jaccard of pairs, identical-set groups."""

    def __init__(self, corpus: Path, doc_ids: set[str]) -> None:
        started = time.perf_counter()
        table = pq.read_table(corpus, columns=["doc_id", "body"])
        table = table.filter(
            pc.is_in(table.column("doc_id"), value_set=pa.array(sorted(doc_ids), pa.string()))
        )
        self.shingles: dict[str, frozenset] = {
            doc_id: frozenset(token_shingles(normalize_text(body or "").split()))
            for doc_id, body in zip(
                table.column("doc_id").to_pylist(), table.column("body").to_pylist(), strict=True
            )
        }
        anchors: dict[frozenset, str] = {}
        for doc_id in sorted(self.shingles):
            anchors.setdefault(self.shingles[doc_id], doc_id)
        # a document's group: the smallest doc_id with the same reference shingle set
        self.group = {doc_id: anchors[shingles] for doc_id, shingles in self.shingles.items()}
        self._cache: dict[tuple[str, str], float] = {}
        self.seconds = time.perf_counter() - started

    def jaccard(self, pair: tuple[str, str]) -> float:
        value = self._cache.get(pair)
        if value is None:
            value = self._cache[pair] = jaccard(self.shingles[pair[0]], self.shingles[pair[1]])
        return value

    def pair_class(self, pair: tuple[str, str]) -> tuple[str, str]:
        return _ordered(self.group.get(pair[0], pair[0]), self.group.get(pair[1], pair[1]))


def check_dbt_exactness(dbt: dict, scorer: ReferenceScorer, threshold: float) -> dict:
    """Every dbt candidate re-scored with the reference; accepted pairs must be scored duplicates."""
    mismatches, wrong_decisions = [], []
    for pair, (value, is_duplicate) in dbt["scored"].items():
        reference = scorer.jaccard(pair)
        if abs(value - reference) > JACCARD_TOLERANCE:
            mismatches.append({"pair": pair, "dbt": value, "reference": reference})
        if is_duplicate != (reference >= threshold):
            wrong_decisions.append({"pair": pair, "dbt_is_duplicate": is_duplicate, "reference": reference})
    accepted = {pair for pair, (_, flag) in dbt["scored"].items() if flag}
    below = [pair for pair in dbt["pairs"] if scorer.jaccard(pair) < threshold]
    return {
        "scored_pairs_checked": len(dbt["scored"]),
        "jaccard_mismatches": len(mismatches),
        "wrong_decisions": len(wrong_decisions),
        "accepted_pairs": len(dbt["pairs"]),
        "accepted_below_threshold": len(below),
        "duplicate_pairs_equal_scored_duplicates": accepted == set(dbt["pairs"]),
        "examples": (mismatches + wrong_decisions)[:MAX_EXAMPLES]
        + [{"below": pair} for pair in below[:MAX_EXAMPLES]],
    }


def compare_with_baseline(
    dbt: dict, base: dict, name: str, scorer: ReferenceScorer, threshold: float, all_docs: list[str]
) -> dict:
    """Pair-level and cluster-level comparison of dbt with one baseline (see the module docstring)."""
    dbt_pairs, base_pairs = set(dbt["pairs"]), base["pairs"]
    # 1. raw document pairs
    raw_both, raw_dbt_only, raw_base_only = (
        dbt_pairs & base_pairs,
        dbt_pairs - base_pairs,
        base_pairs - dbt_pairs,
    )
    # 2. pair classes: identical documents collapsed (undoes dbt's star form)
    dbt_classes: dict[tuple[str, str], tuple[str, str]] = {}
    for pair in sorted(dbt_pairs):
        dbt_classes.setdefault(scorer.pair_class(pair), pair)
    base_classes: dict[tuple[str, str], tuple[str, str]] = {}
    for pair in sorted(base_pairs):
        base_classes.setdefault(scorer.pair_class(pair), pair)
    dbt_candidate_classes = {scorer.pair_class(pair) for pair in dbt["scored"]}
    only_dbt = sorted(set(dbt_classes) - set(base_classes))
    only_base = sorted(set(base_classes) - set(dbt_classes))
    lsh_misses = {"dbt_only": 0, "baseline_only": 0}
    disagreements: list[dict] = []
    for side, classes, representatives in (
        ("dbt_only", only_dbt, dbt_classes),
        ("baseline_only", only_base, base_classes),
    ):
        for pair_class in classes:
            pair = representatives[pair_class]
            reference = scorer.jaccard(pair)
            if reference < threshold:
                disagreements.append(
                    {"kind": f"{side} accepted below threshold", "pair": pair, "ref": reference}
                )
            elif side == "baseline_only" and pair_class in dbt_candidate_classes:
                # dbt's LSH proposed it, yet dbt rejected a true duplicate
                disagreements.append(
                    {"kind": "dbt rejected a true duplicate", "pair": pair, "ref": reference}
                )
            else:
                lsh_misses[side] += 1
    # every accepted pair of the baseline must be a true duplicate (dbt's are checked in check_dbt_exactness)
    base_below = [pair for pair in sorted(base_pairs) if scorer.jaccard(pair) < threshold]
    disagreements.extend(
        {"kind": "baseline accepted below threshold", "pair": pair, "ref": scorer.jaccard(pair)}
        for pair in base_below
        if not any(item["pair"] == pair for item in disagreements)
    )
    raw_only_verified = [scorer.jaccard(pair) for pair in raw_dbt_only | raw_base_only]
    # 3. clusters, on the graph of all accepted pairs of both engines
    one_sided = set(only_dbt) | set(only_base)
    union = components_of(all_docs, dbt_pairs | base_pairs)
    touched = {union[pair[0]] for pair in dbt_pairs | base_pairs if scorer.pair_class(pair) in one_sided}
    dbt_size, base_size = Counter(dbt["clusters"].values()), Counter(base["clusters"].values())
    members: dict[str, list[str]] = {}
    for doc_id in all_docs:
        members.setdefault(union[doc_id], []).append(doc_id)
    explained_docs = mismatched_docs = touched_docs = 0
    mismatch_examples: list[list[str]] = []
    for root, docs in members.items():
        if root in touched:
            touched_docs += len(docs)
            continue
        explained_docs += len(docs)
        dbt_labels = {dbt["clusters"].get(doc_id) for doc_id in docs}
        base_labels = {base["clusters"].get(doc_id) for doc_id in docs}
        same = (
            len(dbt_labels) == 1
            and len(base_labels) == 1
            and dbt_size[next(iter(dbt_labels))] == len(docs)
            and base_size[next(iter(base_labels))] == len(docs)
        )
        if not same:
            mismatched_docs += len(docs)
            if len(mismatch_examples) < MAX_EXAMPLES:
                mismatch_examples.append(sorted(docs)[:10])
    base_consistency = partition_differences(base["clusters"], components_of(all_docs, base_pairs))
    result = {
        "baseline": name,
        "pairs": {
            "dbt": len(dbt_pairs),
            "baseline": len(base_pairs),
            "both": len(raw_both),
            "dbt_only": len(raw_dbt_only),
            "baseline_only": len(raw_base_only),
            "baseline_only_covered_by_dbt_identical_groups": sum(
                1 for pair in raw_base_only if scorer.pair_class(pair) in dbt_classes
            ),
            "dbt_only_covered_by_baseline_identical_groups": sum(
                1 for pair in raw_dbt_only if scorer.pair_class(pair) in base_classes
            ),
            "only_one_side_reference_ge_threshold": sum(
                1 for value in raw_only_verified if value >= threshold
            ),
            "only_one_side_reference_below_threshold": sum(
                1 for value in raw_only_verified if value < threshold
            ),
            "baseline_accepted_below_threshold": len(base_below),
        },
        "pair_classes": {
            "dbt": len(dbt_classes),
            "baseline": len(base_classes),
            "both": len(set(dbt_classes) & set(base_classes)),
            "dbt_only": len(only_dbt),
            "baseline_only": len(only_base),
            "lsh_miss_by_baseline": lsh_misses["dbt_only"],
            "lsh_miss_by_dbt": lsh_misses["baseline_only"],
        },
        "disagreements": len(disagreements),
        "disagreement_examples": disagreements[:MAX_EXAMPLES],
        "clusters": {
            "documents": len(all_docs),
            "dbt_clusters": len(dbt_size),
            "baseline_clusters": len(base_size),
            "dbt_duplicate_clusters": sum(1 for size in dbt_size.values() if size > 1),
            "baseline_duplicate_clusters": sum(1 for size in base_size.values() if size > 1),
            "docs_with_identical_cluster": len(all_docs)
            - partition_differences(dbt["clusters"], base["clusters"]),
            "docs_fully_explained_by_shared_pairs": explained_docs,
            "mismatched_docs_among_explained": mismatched_docs,
            "mismatch_examples": mismatch_examples,
            "docs_in_components_touched_by_lsh_misses": touched_docs,
            "components_touched_by_lsh_misses": len(touched),
            "baseline_clusters_differ_from_own_pair_components": base_consistency,
        },
    }
    result["passed"] = (
        result["disagreements"] == 0
        and mismatched_docs == 0
        and base_consistency == 0
        and set(base["clusters"]) == set(all_docs)
    )
    return result


def check_agreement(
    corpus: Path, dbt_output: Path, baseline_dumps: dict[str, Path], threshold: float = THRESHOLD
) -> dict:
    started = time.perf_counter()
    dbt = read_dbt_outputs(dbt_output)
    bases = {name: read_baseline_outputs(dump) for name, dump in baseline_dumps.items()}
    all_docs = sorted(dbt["clusters"])
    needed = {doc_id for pair in dbt["scored"] for doc_id in pair} | {
        doc_id for base in bases.values() for pair in base["pairs"] for doc_id in pair
    }
    scorer = ReferenceScorer(corpus, needed)
    exactness = check_dbt_exactness(dbt, scorer, threshold)
    dbt_consistency = partition_differences(dbt["clusters"], components_of(all_docs, dbt["pairs"]))
    comparisons = {
        name: compare_with_baseline(dbt, base, name, scorer, threshold, all_docs)
        for name, base in bases.items()
    }
    for name, base in bases.items():
        comparisons[name]["missing_docs"] = len(set(all_docs) - set(base["clusters"]))
        comparisons[name]["extra_docs"] = len(set(base["clusters"]) - set(all_docs))
    passed = (
        exactness["jaccard_mismatches"] == 0
        and exactness["wrong_decisions"] == 0
        and exactness["accepted_below_threshold"] == 0
        and exactness["duplicate_pairs_equal_scored_duplicates"]
        and dbt_consistency == 0
        and all(item["passed"] for item in comparisons.values())
    )
    return {
        "threshold": threshold,
        "reference_documents_shingled": len(scorer.shingles),
        "reference_pairs_scored": len(scorer._cache),
        "reference_seconds": round(scorer.seconds, 3),
        "dbt_exactness": exactness,
        "dbt_clusters_differ_from_own_pair_components": dbt_consistency,
        "comparisons": comparisons,
        "passed": passed,
        "seconds": round(time.perf_counter() - started, 3),
    }


# --------------------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------------------


def throughput(results: dict, corpus: dict) -> None:
    """Add documents/s and MB/s (wall and engine-internal) to every engine's result."""
    documents, megabytes = corpus["stats"]["documents"], corpus["stats"]["body_bytes"] / 1e6
    dbt_result = results.get("dbt")
    for result in results.values():
        for key, seconds in (("wall", result.get("wall_seconds")), ("inner", result.get("elapsed_seconds"))):
            ok = seconds and result["returncode"] == 0
            result[f"{key}_docs_per_second"] = round(documents / seconds, 1) if ok else None
            result[f"{key}_mb_per_second"] = round(megabytes / seconds, 3) if ok else None
        if (
            dbt_result
            and result["engine"] != "dbt"
            and dbt_result["returncode"] == 0
            and result["returncode"] == 0
        ):
            result["dbt_speedup_wall"] = round(result["wall_seconds"] / dbt_result["wall_seconds"], 3)
            if result.get("elapsed_seconds") and dbt_result.get("elapsed_seconds"):
                result["dbt_speedup_inner"] = round(
                    result["elapsed_seconds"] / dbt_result["elapsed_seconds"], 3
                )


def _fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def format_report(report: dict) -> str:
    corpus, results = report["corpus"], report["engines"]
    stats = corpus["stats"]
    megabytes = stats["body_bytes"] / 1e6
    lines = [
        f"corpus: {corpus['path']} ({'reused' if corpus['reused'] else 'generated'}) - "
        f"{stats['documents']:,} documents, {megabytes:.2f} MB body text, seed {corpus['args']['seed']}, "
        f"hot bucket {corpus['args']['hot_bucket']}",
        f"settings: threads {report['settings']['threads']}, dbt threads "
        f"{report['settings'].get('dbt_threads') or 'of the profile'}, DuckDB memory limit "
        f"{report['settings']['memory_limit']}, peak RSS via {report['settings']['rss_method']}",
        "",
    ]
    header = (
        f"{'engine':<20} {'documents':>9} {'wall s':>8} {'CPU s':>8} {'docs/s':>9} {'MB/s':>7} "
        f"{'peak RSS MB':>11} {'inner s':>8} {'dbt speed-up wall':>17} {'inner':>6}"
    )
    lines += [header, "-" * len(header)]
    for result in results.values():
        status = "" if result["returncode"] == 0 else f"  FAILED (exit {result['returncode']})"
        speedup = result.get("dbt_speedup_wall")
        speedup_inner = result.get("dbt_speedup_inner")
        lines.append(
            f"{result['label']:<20} {stats['documents']:>9,} {result['wall_seconds']:>8.2f} "
            f"{_fmt(result.get('cpu_seconds'), '.1f'):>8} "
            f"{_fmt(result.get('wall_docs_per_second'), ',.0f'):>9} "
            f"{_fmt(result.get('wall_mb_per_second'), '.2f'):>7} "
            f"{_fmt(result.get('peak_rss_mb'), ',.0f'):>11} "
            f"{_fmt(result.get('elapsed_seconds'), '.2f'):>8} "
            f"{(_fmt(speedup, '.2f') + 'x') if speedup else '-':>17} "
            f"{(_fmt(speedup_inner, '.2f') + 'x') if speedup_inner else '-':>6}{status}"
        )
    lines.append(
        "wall s: subprocess wall time (dbt: start-up + parse + build; baselines: interpreter start + read + "
        "run). CPU s: user + system time of its processes (wall s x cores kept busy). inner s: dbt "
        "run_results elapsed_time / baseline total_seconds. dbt speed-up = baseline "
        "seconds / dbt seconds (> 1: dbt is faster)."
    )
    dbt = results.get("dbt")
    if dbt and dbt.get("stages"):
        lines += ["", f"dbt stages ({dbt['label']}, run_results.json execution_time, pipeline order)"]
        traced = "test_cpu_seconds" in dbt
        if traced:
            lines.append(
                f"  {'':<28} {'wall':>11}  {'share':>6}  {'CPU s':>7}  (CPU of the build's processes in the "
                "node's window: split evenly where nodes overlap, the node's own with --dbt-threads 1)"
            )

        def cpu_column(seconds) -> str:
            return f"  {seconds:>7.2f}" if traced else ""

        total = dbt["models_seconds"] + dbt["test_seconds"]
        for stage in dbt["stages"]:
            share = 100 * stage["seconds"] / total if total else 0.0
            name = stage["name"] if stage["kind"] == "model" else f"{stage['name']} ({stage['kind']})"
            stage_cpu_seconds = cpu_column(stage.get("cpu_seconds", 0))
            lines.append(f"  {name:<28} {stage['seconds']:>9.3f} s  {share:>5.1f}%{stage_cpu_seconds}")
        models_cpu = sum(stage.get("cpu_seconds", 0) for stage in dbt["stages"])
        lines.append(
            f"  {'models + seeds':<28} {dbt['models_seconds']:>9.3f} s  {'':>6}{cpu_column(models_cpu)}"
        )
        if dbt["data_tests"] or dbt["unit_tests"]:
            label = f"tests ({dbt['data_tests']} data + {dbt['unit_tests']} unit)"
            share = 100 * dbt["test_seconds"] / total if total else 0.0
            tests_cpu = cpu_column(dbt.get("test_cpu_seconds", 0))
            lines.append(f"  {label:<28} {dbt['test_seconds']:>9.3f} s  {share:>5.1f}%{tests_cpu}")
        else:
            lines.append(f"  {'tests':<28} {'skipped':>9}")
        if traced:
            other_cpu = cpu_column(dbt["other_cpu_seconds"])
            lines.append(
                f"  {'other CPU':<28} {'':>11}  {'':>6}{other_cpu}"
                "  (start-up, parse, hooks, exposures, between nodes)"
            )
        lines.append(f"  {'dbt elapsed (run_results)':<28} {dbt['elapsed_seconds']:>9.3f} s")
        lines.append(
            f"  {'dbt start-up + parse':<28} {dbt['wall_seconds'] - dbt['elapsed_seconds']:>9.3f} s"
            "  (wall - elapsed; partial parse)"
        )
        lines.append(
            f"  {'dbt parse beforehand':<28} {dbt['parse_seconds']:>9.3f} s  (not in wall s: `dbt parse` "
            "run first, as any earlier dbt command in the project leaves it)"
        )
        fingerprint = next((stage for stage in dbt["stages"] if stage["name"] == "int_fingerprints"), None)
        if fingerprint and fingerprint["seconds"]:
            lines.append(
                f"fingerprint stage: {megabytes:.2f} MB / {fingerprint['seconds']:.3f} s = "
                f"{megabytes / fingerprint['seconds']:.2f} MB/s "
                f"({stats['documents'] / fingerprint['seconds']:,.0f} docs/s)"
            )
        if dbt.get("failed_nodes"):
            lines.append(f"dbt failed nodes: {', '.join(dbt['failed_nodes'])}")
    agreement = report.get("agreement")
    if agreement:
        lines += ["", _format_agreement(agreement)]
    elif report.get("agreement_skipped"):
        lines += ["", f"agreement check skipped: {report['agreement_skipped']}"]
    return "\n".join(lines)


def _format_agreement(agreement: dict) -> str:
    exact = agreement["dbt_exactness"]
    threshold = agreement["threshold"]
    lines = [
        "agreement check (reference = webdedup.core.reference; "
        f"{agreement['reference_documents_shingled']:,} documents shingled, "
        f"{agreement['reference_pairs_scored']:,} pairs scored, "
        f"{agreement['seconds']:.1f} s)",
        f"  dbt exactness: {exact['scored_pairs_checked']:,} scored candidates re-scored: "
        f"{exact['jaccard_mismatches']} Jaccard mismatches, {exact['wrong_decisions']} wrong decisions; "
        f"{exact['accepted_below_threshold']} of {exact['accepted_pairs']:,} accepted pairs below "
        f"{threshold}; "
        f"clusters vs components of its pairs: "
        f"{agreement['dbt_clusters_differ_from_own_pair_components']} docs differ",
    ]
    for name, item in agreement["comparisons"].items():
        pairs, classes, clusters = item["pairs"], item["pair_classes"], item["clusters"]
        lines += [
            f"  dbt vs {name}:",
            f"    document pairs accepted: dbt {pairs['dbt']:,} (star form), {name} {pairs['baseline']:,}; "
            f"both {pairs['both']:,}, dbt only {pairs['dbt_only']:,}, {name} only {pairs['baseline_only']:,} "
            f"({pairs['baseline_only_covered_by_dbt_identical_groups']:,} of them implied by dbt's "
            f"identical-document groups)",
            f"    only-one-side pairs verified: {pairs['only_one_side_reference_ge_threshold']:,} with "
            f"reference J >= {threshold}, {pairs['only_one_side_reference_below_threshold']} below; "
            f"{name} pairs below {threshold}: {pairs['baseline_accepted_below_threshold']}",
            f"    pair classes (identical documents collapsed): both {classes['both']:,}, dbt only "
            f"{classes['dbt_only']:,}, {name} only {classes['baseline_only']:,} -> LSH misses: "
            f"{classes['lsh_miss_by_baseline']} by {name}, {classes['lsh_miss_by_dbt']} by dbt; "
            f"disagreements: {item['disagreements']}",
            f"    clusters: dbt {clusters['dbt_clusters']:,} ({clusters['dbt_duplicate_clusters']:,} with "
            f"duplicates), {name} {clusters['baseline_clusters']:,} "
            f"({clusters['baseline_duplicate_clusters']:,}); documents in the identical cluster on both: "
            f"{clusters['docs_with_identical_cluster']:,} / {clusters['documents']:,}",
            f"    documents fully explained by pairs found by both: "
            f"{clusters['docs_fully_explained_by_shared_pairs']:,}, cluster mismatches among them: "
            f"{clusters['mismatched_docs_among_explained']}; documents in "
            f"{clusters['components_touched_by_lsh_misses']} components touched by LSH misses: "
            f"{clusters['docs_in_components_touched_by_lsh_misses']:,}",
        ]
        for example in item["disagreement_examples"]:
            lines.append(f"    disagreement: {example}")
        for example in clusters["mismatch_examples"]:
            lines.append(f"    cluster mismatch: {example}")
        if clusters["baseline_clusters_differ_from_own_pair_components"]:
            lines.append(
                f"    {name} clusters differ from the components of its own pairs for "
                f"{clusters['baseline_clusters_differ_from_own_pair_components']} documents"
            )
        if item["missing_docs"] or item["extra_docs"]:
            lines.append(f"    {name}: {item['missing_docs']} documents missing, {item['extra_docs']} extra")
    for example in exact["examples"]:
        lines.append(f"  dbt exactness problem: {example}")
    misses = sum(
        item["pair_classes"]["lsh_miss_by_baseline"] + item["pair_classes"]["lsh_miss_by_dbt"]
        for item in agreement["comparisons"].values()
    )
    disagreements = (
        sum(item["disagreements"] for item in agreement["comparisons"].values())
        + exact["jaccard_mismatches"]
        + exact["wrong_decisions"]
        + exact["accepted_below_threshold"]
    )
    mismatches = sum(
        item["clusters"]["mismatched_docs_among_explained"] for item in agreement["comparisons"].values()
    )
    verdict = "PASS" if agreement["passed"] else "FAIL"
    lines.append(
        f"AGREEMENT {verdict}: {disagreements} disagreements, {mismatches}"
        f" cluster mismatches where LSH agrees ({misses} LSH-miss differences, expected and not failures)"
    )
    return "\n".join(lines)


def _jsonable(value):
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return value


# --------------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------------


def parse_engines(text: str) -> list[str]:
    engines = [item.strip() for item in text.split(",") if item.strip()]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown or not engines:
        raise argparse.ArgumentTypeError(f"engines must be a comma list of {', '.join(ENGINES)}")
    return [engine for engine in ENGINES if engine in engines]


def _work_dir(args: argparse.Namespace) -> Path:
    return Path(args.work or ROOT / "bench_work" / str(args.docs)).resolve()


def run_benchmark(args: argparse.Namespace) -> dict:
    work = _work_dir(args)
    work.mkdir(parents=True, exist_ok=True)
    rss_method = resolve_rss_method(args.rss)
    corpus = ensure_corpus(work, args.docs, args.seed, args.hot_bucket, workers=max(1, args.threads))
    corpus_path = Path(corpus["path"])
    report: dict = {
        "corpus": corpus,
        "settings": {
            "engines": args.engines,
            "threads": args.threads,
            "dbt_threads": args.dbt_threads,
            "memory_limit": args.memory_limit or f"project default ({project_memory_limit()})",
            "skip_build_tests": args.skip_build_tests,
            "rss_method": "/usr/bin/time -v" if rss_method == "time" else "psutil",
            "work": str(work),
            "threshold": THRESHOLD,
        },
        "engines": {},
    }
    for engine in args.engines:
        print(f"running {engine} ...", file=sys.stderr, flush=True)
        if engine == "dbt":
            result = run_dbt(
                corpus_path,
                work,
                threads=args.threads,
                memory_limit=args.memory_limit,
                skip_tests=args.skip_build_tests,
                rss_method=rss_method,
                dbt_threads=args.dbt_threads,
            )
        else:
            result = run_baseline(engine, corpus_path, work, threads=args.threads, rss_method=rss_method)
        if result["returncode"] != 0:
            print(
                f"{engine} failed (exit {result['returncode']}):\n{_log_tail(result['log'])}", file=sys.stderr
            )
        report["engines"][engine] = result
    throughput(report["engines"], corpus)
    dbt = report["engines"].get("dbt")
    baselines_ok = {
        name: Path(result["dump"])
        for name, result in report["engines"].items()
        if name in BASELINES and result["returncode"] == 0
    }
    if not dbt or dbt["returncode"] != 0:
        report["agreement_skipped"] = "dbt did not run successfully"
    elif not baselines_ok:
        report["agreement_skipped"] = "no baseline ran successfully"
    else:
        print("checking agreement ...", file=sys.stderr, flush=True)
        report["agreement"] = check_agreement(corpus_path, Path(dbt["output_dir"]), baselines_ok)
    return report


def write_new_batch(corpus: Path, folder: Path, share: float, seed: int) -> int:
    """A new crawl batch of ``share`` x N documents with new doc_ids: half re-crawls of existing pages
    (the same body: they join existing clusters), half new pages from another generator seed."""
    existing = pq.read_table(corpus)
    count = max(2, round(existing.num_rows * share))
    recrawled = existing.slice(0, count // 2).select(generate_corpus.SCHEMA.names)
    fresh = generate_corpus.generate(count - count // 2, seed=seed + 1).select(generate_corpus.SCHEMA.names)
    parts = []
    for prefix, part in (("recrawl-", recrawled), ("new-", fresh.cast(recrawled.schema))):
        ids = pc.binary_join_element_wise(prefix, part.column("doc_id"), "")
        parts.append(part.set_column(part.schema.get_field_index("doc_id"), "doc_id", ids))
    batch = pa.concat_tables(parts)
    pq.write_table(batch, folder / "batch-new.parquet")
    return batch.num_rows


def run_incremental(args: argparse.Namespace, corpus: Path, work: Path, rss_method: str) -> dict:
    """Per share of ``args.incremental``: a full build of a folder holding the corpus, then an incremental
    build after a new batch of share x N documents is added to the folder (same database); once, the same
    build on the 24-page seed (the fixed cost no incremental build goes below)."""
    options = {
        "threads": args.threads,
        "memory_limit": args.memory_limit,
        "skip_tests": args.skip_build_tests,
        "rss_method": rss_method,
        "extra_vars": {"incremental_outputs": True} if args.incremental_outputs else None,
        "dbt_threads": args.dbt_threads,
    }
    batches = []
    for share in args.incremental:
        home = work / f"incremental-{share:g}"
        folder = home / "input"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "corpus.parquet").symlink_to(corpus)
        print(
            f"running dbt on the corpus folder (full build, +{share:.0%} next) ...",
            file=sys.stderr,
            flush=True,
        )
        full = run_dbt(folder, home, fresh=True, **options)
        added = write_new_batch(corpus, folder, share, args.seed)
        print(
            f"running dbt after adding {added:,} documents (incremental build) ...",
            file=sys.stderr,
            flush=True,
        )
        incremental = run_dbt(folder, home, fresh=False, **options)
        batches.append({"share": share, "added_documents": added, "full": full, "incremental": incremental})
    print("running dbt on the 24-page seed (fixed cost of a build) ...", file=sys.stderr, flush=True)
    floor = run_dbt(None, work / "incremental-floor", fresh=True, **options)
    return {"batches": batches, "floor": floor}


def _status(run: dict) -> str:
    return "" if run["returncode"] == 0 else f"  FAILED (exit {run['returncode']})"


def _cpu(result: dict) -> str:
    return f", {result['cpu_seconds']:8.1f} CPU s" if result.get("cpu_seconds") is not None else ""


def format_incremental(result: dict, top_stages: int = 8) -> str:
    lines = []
    for batch in result["batches"]:
        full, incremental = batch["full"], batch["incremental"]
        lines += [
            "",
            f"incremental build: +{batch['share']:.0%} ({batch['added_documents']:,} new documents, half"
            " re-crawls of existing pages) added to the folder",
            f"  full build of the folder        {full['wall_seconds']:8.2f} s wall{_cpu(full)}"
            + _status(full),
            f"  incremental build after the add {incremental['wall_seconds']:8.2f} s wall{_cpu(incremental)}"
            + _status(incremental),
            f"  incremental / full              {incremental['wall_seconds'] / full['wall_seconds']:8.1%}",
            "  slowest stages of the incremental build (execution_time; full build beside it):",
        ]
        full_stages = {stage["name"]: stage["seconds"] for stage in full.get("stages", [])}
        slowest = sorted(incremental.get("stages", []), key=lambda stage: -stage["seconds"])[:top_stages]
        for stage in slowest:
            before = full_stages.get(stage["name"], 0.0)
            lines.append(f"    {stage['name']:<30} {stage['seconds']:7.2f} s   full {before:7.2f} s")
    floor = result["floor"]
    full_seconds = [batch["full"]["wall_seconds"] for batch in result["batches"]]
    lines += [
        "",
        f"same build on the 24-page seed    {floor['wall_seconds']:8.2f} s wall{_cpu(floor)}"
        + _status(floor),
        f"seed build / full                 {floor['wall_seconds'] / min(full_seconds):8.1%}"
        "  (dbt start-up, nodes, tests, exports: no incremental build goes below it)",
    ]
    return "\n".join(lines)


def parse_shares(text: str) -> list[float]:
    shares = [float(part) for part in text.split(",") if part.strip()]
    if any(not 0 < share <= 1 for share in shares):
        raise argparse.ArgumentTypeError(f"shares of N between 0 and 1 expected, got {text!r}")
    return shares


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, help="number of documents N")
    parser.add_argument("--hot-bucket", type=int, default=0, help="K identical short pages among the N")
    parser.add_argument("--seed", type=int, default=generate_corpus.DEFAULT_SEED)
    parser.add_argument("--work", help="work directory (default: bench_work/N in the project)")
    parser.add_argument("--engines", type=parse_engines, default=list(ENGINES), help="comma list")
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="dbt var fingerprint_workers, RAYON_NUM_THREADS of the baselines, corpus generator workers",
    )
    parser.add_argument(
        "--dbt-threads",
        type=int,
        default=None,
        help="dbt build --threads (default: the profile's 2); with 1 no two nodes overlap, so each stage's "
        "CPU seconds are its own rather than an even split of the CPU of the nodes beside it",
    )
    parser.add_argument(
        "--memory-limit",
        default="",
        help="DEDUP_MEMORY_LIMIT for dbt (DuckDB); default: the project's (a quarter of RAM, 1-3 GB)",
    )
    parser.add_argument(
        "--incremental",
        type=parse_shares,
        default=[],
        help="also time incremental builds, each after adding this share of N new documents to a full build"
        " (a comma list, e.g. 0.01,0.1)",
    )
    parser.add_argument(
        "--incremental-outputs",
        action="store_true",
        help="the --incremental builds with var incremental_outputs (keyed outputs as folders of parts,"
        " one per build)",
    )
    parser.add_argument("--json", help="write all figures to this JSON file")
    parser.add_argument(
        "--skip-build-tests", action="store_true", help="dbt build without data and unit tests"
    )
    parser.add_argument(
        "--rss",
        choices=("auto", "time", "psutil"),
        default="auto",
        help="peak RSS: /usr/bin/time -v (auto: when available) or psutil polling",
    )
    # internal: the child runner of one baseline
    parser.add_argument("--baseline-child", choices=BASELINES, help=argparse.SUPPRESS)
    parser.add_argument("--baseline-corpus", help=argparse.SUPPRESS)
    parser.add_argument("--baseline-dump", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.baseline_child:
        return baseline_child(args.baseline_child, args.baseline_corpus, args.baseline_dump)
    if not args.docs or args.docs <= 0:
        parser.error("--docs N (a positive number) is required")
    if args.threads <= 0:
        parser.error("--threads must be positive")
    report = run_benchmark(args)
    print(format_report(report))
    if args.incremental:
        rss_method = resolve_rss_method(args.rss)
        report["incremental"] = run_incremental(
            args, Path(report["corpus"]["path"]), _work_dir(args), rss_method
        )
        print(format_incremental(report["incremental"]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(_jsonable(report), indent=2) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    failed = any(result["returncode"] != 0 for result in report["engines"].values())
    incremental = report.get("incremental", {"batches": []})
    runs = [run for batch in incremental["batches"] for run in (batch["full"], batch["incremental"])]
    failed = failed or any(
        run["returncode"] != 0 for run in [*runs, *([incremental["floor"]] if runs else [])]
    )
    agreement = report.get("agreement")
    return 1 if failed or (agreement is not None and not agreement["passed"]) else 0


if __name__ == "__main__":
    sys.exit(main())
