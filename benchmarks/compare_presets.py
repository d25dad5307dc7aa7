"""Recall and cost of the `default` and `recall` banding presets, side by side, from one invocation.

    python benchmarks/compare_presets.py --docs 20000 [--near-threshold-share 0.1] [--work bench_work/presets]

Generates a corpus with planted near-threshold pairs (benchmarks/generate_corpus.py), then runs
`dbt build` with the missed-pair audit on (--vars audit: true) once per preset, and prints for each: the
banding, the exact audit's pair recall of LSH (overall and for J in [0.7, 0.8)), precision of the accepted
pairs against the audit, candidates scored, and the build's wall time and fingerprint/scoring seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.generate_corpus import write_corpus  # noqa: E402


def run_preset(preset: str, corpus: Path, work: Path) -> dict:
    db_path = work / f"preset_{preset}.duckdb"
    target = work / f"target-{preset}"
    env = dict(
        os.environ, DEDUP_DB_PATH=str(db_path), DEDUP_PUBLISH_DIR="", DBT_SEND_ANONYMOUS_USAGE_STATS="false"
    )
    dbt_vars = {
        "documents_path": str(corpus),
        "output_dir": str(work / f"out-{preset}"),
        "preset": preset,
        "audit": True,
    }
    command = [
        str(Path(sys.executable).with_name("dbt")),
        "build",
        "--profiles-dir",
        str(ROOT),
        "--project-dir",
        str(ROOT),
        "--target-path",
        str(target),
        "--vars",
        json.dumps(dbt_vars),
    ]
    started = time.monotonic()
    result = subprocess.run(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wall = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"dbt build ({preset}) failed:\n{result.stdout[-4000:]}")
    results = json.loads((target / "run_results.json").read_text())["results"]
    timings = {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results}
    pipeline = sum(
        r["execution_time"]
        for r in results
        if r["unique_id"].startswith(("model.", "seed.")) and ".audit_" not in r["unique_id"]
    )
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        settings = con.sql(
            "select bands, rows_per_band, num_hashes from main_internal.int_run_settings"
        ).fetchall()[0]
        recall = {
            b: (t, f)
            for b, t, f in con.sql(
                "select jaccard_bucket, true_pairs, lsh_pairs from audit_lsh_recall"
            ).fetchall()
        }
        candidates = con.sql("select count(*) from scored_pairs").fetchall()[0][0]
        accepted, accepted_true = con.sql(
            """
            select count(*), count(*) filter (
                where s.left_anchor_doc_id = s.right_anchor_doc_id or a.jaccard is not null)
            from scored_pairs as s
            left join audit_pair_jaccards as a
                on a.left_anchor_doc_id = least(s.left_anchor_doc_id, s.right_anchor_doc_id)
                and a.right_anchor_doc_id = greatest(s.left_anchor_doc_id, s.right_anchor_doc_id)
            where s.is_duplicate
            """
        ).fetchall()[0]
    finally:
        con.close()
    near = recall.get("[threshold, 0.75)", (0, 0)), recall.get("[0.75, 0.80)", (0, 0))
    near_true, near_found = near[0][0] + near[1][0], near[0][1] + near[1][1]
    return {
        "preset": preset,
        "banding": f"{settings[0]} x {settings[1]} ({settings[2]} hashes)",
        "pair_recall": recall["all"][1] / recall["all"][0] if recall["all"][0] else None,
        "true_pairs": recall["all"][0],
        "near_threshold_recall": near_found / near_true if near_true else None,
        "precision": accepted_true / accepted if accepted else None,
        "candidates": candidates,
        "wall_seconds": round(wall, 1),
        "pipeline_seconds": round(pipeline, 1),
        "fingerprint_seconds": round(timings.get("int_fingerprints", 0), 1),
        "scoring_seconds": round(timings.get("scored_pairs", 0), 1),
        "audit_seconds": round(timings.get("audit_pair_jaccards", 0) + timings.get("audit_lsh_recall", 0), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--near-threshold-share", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", default="bench_work/presets")
    args = parser.parse_args()
    work = (ROOT / args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"corpus-{args.docs}-{args.near_threshold_share}-{args.seed}.parquet"
    if not corpus.exists():
        write_corpus(corpus, args.docs, seed=args.seed, near_threshold_share=args.near_threshold_share)
    rows = [run_preset(preset, corpus, work) for preset in ("default", "recall")]
    print(
        f"corpus: {args.docs:,} documents, near-threshold share {args.near_threshold_share}, seed {args.seed}"
    )
    header = (
        "preset",
        "banding",
        "true_pairs",
        "pair_recall",
        "near_threshold_recall",
        "precision",
        "candidates",
        "wall_seconds",
        "pipeline_seconds",
        "fingerprint_seconds",
        "scoring_seconds",
        "audit_seconds",
    )
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(f"{row[h]:.4f}" if isinstance(row[h], float) else str(row[h]) for h in header))
    (work / "results.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
