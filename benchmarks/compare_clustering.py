"""`clustering: components` (the spec) against `clustering: strict` on one generated corpus.

    python benchmarks/compare_clustering.py --docs 20000 [--near-threshold-share 0.3] [--chains 20] [--work D]

Generates a corpus with planted groups (benchmarks/generate_corpus.py: revisions, mirrors and
near-threshold variants), adds --chains explicit chains of 6 pages (each page the previous one with two
words replaced, about J 0.8 to its neighbours and below 0.7 two or three steps away:
tests/python/helpers/quality_corpora.py), runs `dbt build` once per mode (preset
recall, so that LSH misses almost no edge) and prints, per mode: documents removed, removals whose exact
Jaccard to the kept page is below the threshold (removals.parquet), clusters, co-clustered document
pairs, accepted edges (pairs at or above the threshold) whose two pages share a cluster, strict's
co-clustered pair recall against components (strict's pairs are a subset) and the wall
time of the build.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from benchmarks.generate_corpus import write_corpus  # noqa: E402
from tests.python.helpers.quality_corpora import chain_rows  # noqa: E402


def run_mode(mode: str, corpus: Path, work: Path) -> dict:
    db_path = work / f"clustering_{mode}.duckdb"
    env = dict(
        os.environ, DEDUP_DB_PATH=str(db_path), DEDUP_PUBLISH_DIR="", DBT_SEND_ANONYMOUS_USAGE_STATS="false"
    )
    dbt_vars = {
        "documents_path": str(corpus),
        "output_dir": str(work / f"out-{mode}"),
        "preset": "recall",
        "clustering": mode,
    }
    command = [
        str(Path(sys.executable).with_name("dbt")),
        "build",
        "--profiles-dir",
        str(ROOT),
        "--project-dir",
        str(ROOT),
        "--target-path",
        str(work / f"target-{mode}"),
        "--vars",
        json.dumps(dbt_vars),
    ]
    started = time.monotonic()
    result = subprocess.run(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wall = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"dbt build ({mode}) failed:\n{result.stdout[-4000:]}")
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        threshold = con.sql("select threshold from main_internal.int_run_settings").fetchall()[0][0]
        sizes = Counter(
            dict(con.sql("select representative_doc_id, count(*) from clusters group by 1").fetchall())
        )
        edges_kept, edges = con.sql(
            "select count(*) filter (where l.cluster_id = r.cluster_id), count(*) from duplicate_pairs as d"
            " inner join clusters as l on d.left_doc_id = l.doc_id"
            " inner join clusters as r on d.right_doc_id = r.doc_id"
        ).fetchall()[0]
        removed, below = con.sql(
            f"select count(*), count(*) filter (where jaccard < {threshold}) from removals"
        ).fetchall()[0]
    finally:
        con.close()
    return {
        "mode": mode,
        "removed": removed,
        "removed_below_threshold": below,
        "clusters_with_duplicates": sum(1 for n in sizes.values() if n > 1),
        "co_clustered_pairs": sum(n * (n - 1) // 2 for n in sizes.values()),
        "accepted_edges_inside_a_cluster": f"{edges_kept} of {edges}",
        "build_seconds": round(wall, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--near-threshold-share", type=float, default=0.3)
    parser.add_argument("--chains", type=int, default=0)
    parser.add_argument("--work", default="bench_work/clustering")
    args = parser.parse_args(argv)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.parquet"
    write_corpus(corpus, args.docs, seed=args.seed, near_threshold_share=args.near_threshold_share)
    if args.chains:
        generated = pq.read_table(corpus).drop_columns(["group_id"])
        chains = pa.Table.from_pylist(chain_rows(args.chains, 6, seed=args.seed), schema=generated.schema)
        pq.write_table(pa.concat_tables([generated, chains]), corpus)
    rows = [run_mode(mode, corpus, work) for mode in ("components", "strict")]
    for row in rows:
        print(json.dumps(row))
    recall = rows[1]["co_clustered_pairs"] / max(rows[0]["co_clustered_pairs"], 1)
    print(json.dumps({"strict_co_clustered_pair_recall": round(recall, 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
