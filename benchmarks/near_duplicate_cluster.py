"""One cluster of near-identical pages inside a corpus, beside a build of the same corpus without it, in
one invocation.

    python benchmarks/near_duplicate_cluster.py --near 6000 --others 20000 --work /tmp/near

Identical pages are collapsed before LSH (docs/design.md), near-identical ones are not: the N pages
(each a 300-word base page with two words replaced) share their bands, so their N(N-1)/2 pairs are all
candidates and all scored exactly, as the spec's outputs list every pair. Prints, for the corpus with
and without the cluster: wall seconds, peak RSS, the scored pairs and the slowest stages.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import run_benchmark as rb


def corpus(near: int, others: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9))) for _ in range(20000)
    ]
    base = rng.choices(vocabulary, k=300)
    rows = []
    for i in range(near):
        words = list(base)
        for _ in range(2):
            words[rng.randrange(len(words))] = rng.choice(vocabulary)
        rows.append((f"near{i:07d}", "template", f"spam{i % 50}.example", "2024-01-01", " ".join(words)))
    for i in range(others):
        body = " ".join(rng.choices(vocabulary, k=rng.randint(100, 600)))
        rows.append((f"page{i:07d}", "web", f"site{i % 100}.example", "2024-01-02", body))
    names = ["doc_id", "source", "domain", "crawled_at", "body"]
    table = pa.table({name: [row[k] for row in rows] for k, name in enumerate(names)})
    return table.append_column("title", pa.array(["t"] * len(rows)))


def measure(table: pa.Table, work: Path, args: argparse.Namespace, rss_method: str) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, work / "corpus.parquet")
    run = rb.run_dbt(
        work / "corpus.parquet",
        work,
        threads=args.threads,
        memory_limit="",
        skip_tests=False,
        rss_method=rss_method,
    )
    if run["returncode"] != 0:
        print(rb._log_tail(run["log"]), file=sys.stderr)
        return {"documents": table.num_rows, "failed": True, **run}
    pairs = duckdb.sql(f"select count(*) from '{work / 'output' / 'scored_pairs.parquet'}'").fetchall()[0][0]
    slowest = sorted(run["stages"], key=lambda stage: -stage["seconds"])[:6]
    return {
        "documents": table.num_rows,
        "wall_seconds": run["wall_seconds"],
        "peak_rss_mb": run["peak_rss_mb"],
        "scored_pairs": pairs,
        "slowest_stages": {stage["name"]: stage["seconds"] for stage in slowest},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--near", type=int, default=6000, help="pages in the near-identical cluster")
    parser.add_argument("--others", type=int, default=20000, help="ordinary pages around it")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--work", required=True)
    args = parser.parse_args(argv)
    rss_method = rb.resolve_rss_method("auto")
    table = corpus(args.near, args.others, args.seed)
    without = table.slice(args.near)
    for name, data in (("without_cluster", without), ("with_cluster", table)):
        print(json.dumps({name: measure(data, Path(args.work) / name, args, rss_method)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
