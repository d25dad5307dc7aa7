"""Baseline near-duplicate pipelines a user would otherwise write in plain Python.

Both baselines follow the spec's algorithm with the same settings as the dbt pipeline:

1. ``shingles``   - ``webdedup.core.reference.normalize_text`` + ``token_shingles`` (5-token shingles);
2. ``minhash``    - 64-value MinHash: ``datasketch.MinHash`` (``update_batch`` on UTF-8 encoded shingles,
                    built with ``MinHash.bulk`` so permutations are initialised once) or rensa's
                    ``RMinHash.from_token_sets`` (Rust, batch API);
3. ``lsh``        - 8 bands x 8 rows: ``datasketch.MinHashLSH(params=(8, 8))`` or
                    ``rensa.RMinHashLSH(num_bands=8)``; every document is inserted then queried and the
                    candidate pairs (left < right) are collected;
4. ``verify``     - exact Jaccard of the Python shingle sets of each candidate pair, keep J >= threshold;
5. ``components`` - union-find connected components; the cluster root is the smallest doc_id and the
                    representative is the newest ``crawled_at``, then more tokens, then the smallest doc_id.

Shingle sets are kept in memory between stages 1 and 4 (the usual way to write it) unless the corpus is
large (> 50k documents by default; they cost ~100 KB of Python objects per 3.5 KB page); then stages 1
and 2 run in chunks of 10,000 documents (only one chunk's sets exist at a time) and the sets are rebuilt
during ``verify`` only for documents that appear in a candidate pair, as sorted arrays of the shingles'
64-bit hashes (the 1M-page corpus held ~30 GB of such sets as Python strings).

CLI::

    python benchmarks/baselines.py --engine datasketch|rensa PATH.parquet [--threshold 0.7] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if __package__ in (None, ""):  # executed as ``python benchmarks/baselines.py``
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webdedup.core.reference import normalize_text, token_shingles

STAGES = ("shingles", "minhash", "lsh", "verify", "components")
KEEP_SHINGLES_MAX_DOCS = 50_000
MINHASH_CHUNK_DOCS = 10_000
COLUMNS = ["doc_id", "crawled_at", "body"]


def _load(table_or_path, limit: int | None = None) -> tuple[pa.Table, float]:
    started = time.perf_counter()
    if isinstance(table_or_path, pa.Table):
        table = table_or_path.select(COLUMNS)
    else:
        table = pq.read_table(str(table_or_path), columns=COLUMNS)
    if limit is not None:
        table = table.slice(0, limit)
    return table, time.perf_counter() - started


def _shingle(body: str | None, shingle_size: int) -> tuple[set[str], int]:
    tokens = normalize_text(body or "").split()
    return token_shingles(tokens, size=shingle_size), len(tokens)


class UnionFind:
    """Union-find over hashable items (created on first use); the root of a set is its smallest item."""

    def __init__(self, items=()) -> None:
        self.parent: dict = {item: item for item in items}

    def find(self, item):
        parent = self.parent
        parent.setdefault(item, item)
        root = item
        while parent[root] != root:
            root = parent[root]
        while parent[item] != root:  # path compression
            parent[item], item = root, parent[item]
        return root

    def union(self, left, right) -> None:
        left_root, right_root = self.find(left), self.find(right)
        if left_root != right_root:
            if left_root < right_root:
                self.parent[right_root] = left_root
            else:
                self.parent[left_root] = right_root


def _hashed_set(shingles: set[str]) -> np.ndarray:
    """A shingle set as the sorted 64-bit hashes of its shingles (about 8 bytes a shingle instead of
    ~100 as Python strings; the dbt pipeline scores 64-bit shingle hashes too)."""
    return np.unique(np.fromiter((hash(s) for s in shingles), dtype=np.int64, count=len(shingles)))


def _minhash(engine: str, shingle_sets: list[set[str]], num_perm: int, hashfunc: str) -> list:
    """One MinHash per shingle set with the engine's batch API."""
    if engine == "datasketch":
        from datasketch import MinHash

        kwargs: dict = {"num_perm": num_perm}
        if hashfunc == "xxhash":
            import xxhash

            kwargs["hashfunc"] = xxhash.xxh32_intdigest
        return MinHash.bulk(([s.encode("utf-8") for s in shingles] for shingles in shingle_sets), **kwargs)
    if engine == "rensa":
        from rensa import RMinHash

        return RMinHash.from_token_sets(shingle_sets, num_perm=num_perm, seed=42)
    raise ValueError(f"unknown engine {engine!r}")


def _run(
    engine: str,
    table_or_path,
    threshold,
    num_perm,
    bands,
    rows,
    shingle_size,
    keep_shingles,
    limit,
    hashfunc: str = "sha1",
) -> dict:
    if bands * rows != num_perm:
        raise ValueError("bands * rows must equal num_perm")
    started = time.perf_counter()
    table, read_seconds = _load(table_or_path, limit)
    doc_ids: list[str] = table.column("doc_id").to_pylist()
    bodies: list[str] = table.column("body").to_pylist()
    # dense rank of crawled_at (works for timestamp, date or string columns; nulls rank lowest)
    crawled: list[int] = pc.rank(
        table.column("crawled_at"), sort_keys=[("crawled_at", "ascending", "at_start")], tiebreaker="dense"
    ).to_pylist()
    del table
    n = len(doc_ids)
    keep = n <= KEEP_SHINGLES_MAX_DOCS if keep_shingles is None else keep_shingles
    seconds = dict.fromkeys(STAGES, 0.0)

    # 1. normalise + shingle and 2. MinHash, in chunks of documents unless the sets are kept: a large
    # corpus never holds every shingle set at once
    chunk = max(n, 1) if keep else MINHASH_CHUNK_DOCS
    shingle_sets: list[set[str]] = []
    token_counts: list[int] = []
    minhashes: list = []
    for start in range(0, n, chunk):
        t0 = time.perf_counter()
        chunk_sets: list[set[str]] = []
        for body in bodies[start : start + chunk]:
            shingles, count = _shingle(body, shingle_size)
            chunk_sets.append(shingles)
            token_counts.append(count)
        seconds["shingles"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        minhashes.extend(_minhash(engine, chunk_sets, num_perm, hashfunc))
        seconds["minhash"] += time.perf_counter() - t0
        if keep:
            shingle_sets.extend(chunk_sets)

    # 3. LSH candidates (pairs of row indexes, left < right)
    candidates: set[tuple[int, int]] = set()
    t0 = time.perf_counter()
    if engine == "datasketch":
        from datasketch import MinHashLSH

        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, params=(bands, rows))
        with lsh.insertion_session() as session:
            for index, minhash in enumerate(minhashes):
                session.insert(index, minhash, check_duplication=False)
    else:
        from rensa import RMinHashLSH

        lsh = RMinHashLSH(threshold=threshold, num_perm=num_perm, num_bands=bands)
        lsh.insert_many(minhashes, start_key=0)
    # one query() per document (rensa 0.5.0: ~25x faster than its batch query_all())
    for index, minhash in enumerate(minhashes):
        for other in lsh.query(minhash):
            if other > index:
                candidates.add((index, other))
    del lsh, minhashes
    seconds["lsh"] = time.perf_counter() - t0

    # 4. exact Jaccard on the candidate pairs
    t0 = time.perf_counter()
    if keep:
        lookup = shingle_sets
    else:  # rebuild the sets only for documents that are part of a candidate pair, compactly
        needed = sorted({index for pair in candidates for index in pair})
        lookup = {i: _hashed_set(_shingle(bodies[i], shingle_size)[0]) for i in needed}
    accepted: list[tuple[int, int]] = []
    for left, right in candidates:
        a, b = lookup[left], lookup[right]
        shared = len(a & b) if keep else int(np.intersect1d(a, b, assume_unique=True).size)
        union = len(a) + len(b) - shared
        if union and shared / union >= threshold:
            accepted.append((left, right))
    seconds["verify"] = time.perf_counter() - t0
    del lookup, shingle_sets  # freeing millions of shingle strings is not charged to a stage

    # 5. connected components, roots and representatives
    t0 = time.perf_counter()
    forest = UnionFind(range(n))
    for left, right in accepted:
        forest.union(left, right)
    members: dict[int, list[int]] = {}
    for index in range(n):
        members.setdefault(forest.find(index), []).append(index)
    clusters: dict[str, str] = {}
    representatives: dict[str, str] = {}
    for group in members.values():
        root = min(doc_ids[i] for i in group)
        for i in group:
            clusters[doc_ids[i]] = root
        best = min(group, key=lambda i: (-crawled[i], -token_counts[i], doc_ids[i]))
        representatives[root] = doc_ids[best]
    duplicate_pairs = {
        (doc_ids[a], doc_ids[b]) if doc_ids[a] < doc_ids[b] else (doc_ids[b], doc_ids[a]) for a, b in accepted
    }
    seconds["components"] = time.perf_counter() - t0

    total = time.perf_counter() - started
    return {
        "engine": engine,
        "documents": n,
        "candidate_count": len(candidates),
        "duplicate_pair_count": len(duplicate_pairs),
        "cluster_count": len(members),
        "duplicate_cluster_count": sum(1 for group in members.values() if len(group) > 1),
        "duplicate_pairs": duplicate_pairs,
        "clusters": clusters,
        "representatives": representatives,
        "seconds": {stage: round(value, 4) for stage, value in seconds.items()},
        "read_seconds": round(read_seconds, 4),
        "total_seconds": round(total, 4),
        "docs_per_second": round(n / total, 1) if total else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "settings": {
            "threshold": threshold,
            "num_perm": num_perm,
            "bands": bands,
            "rows": rows,
            "shingle_size": shingle_size,
            "kept_shingle_sets": keep,
            **({"hashfunc": hashfunc} if engine == "datasketch" else {"seed": 42}),
        },
    }


def run_datasketch(
    table_or_path,
    threshold: float = 0.7,
    num_perm: int = 64,
    bands: int = 8,
    rows: int = 8,
    shingle_size: int = 5,
    *,
    keep_shingles: bool | None = None,
    limit: int | None = None,
    hashfunc: str = "sha1",
) -> dict:
    """datasketch MinHash (``hashfunc='sha1'``: library default, or ``'xxhash'``) + MinHashLSH baseline."""
    if hashfunc not in ("sha1", "xxhash"):
        raise ValueError("hashfunc must be 'sha1' or 'xxhash'")
    return _run(
        "datasketch",
        table_or_path,
        threshold,
        num_perm,
        bands,
        rows,
        shingle_size,
        keep_shingles,
        limit,
        hashfunc,
    )


def run_rensa(
    table_or_path,
    threshold: float = 0.7,
    num_perm: int = 64,
    bands: int = 8,
    rows: int = 8,
    shingle_size: int = 5,
    *,
    keep_shingles: bool | None = None,
    limit: int | None = None,
) -> dict:
    """rensa RMinHash (batch ``from_token_sets``) + RMinHashLSH baseline."""
    return _run("rensa", table_or_path, threshold, num_perm, bands, rows, shingle_size, keep_shingles, limit)


def summary(result: dict) -> dict:
    """JSON-friendly view of a result (drops the per-document mappings and the pair set)."""
    return {k: v for k, v in result.items() if k not in ("duplicate_pairs", "clusters", "representatives")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run a datasketch or rensa dedup baseline on a parquet corpus"
    )
    parser.add_argument("path", help="parquet file with doc_id, crawled_at and body columns")
    parser.add_argument("--engine", choices=("datasketch", "rensa"), required=True)
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--num-perm", type=int, default=64)
    parser.add_argument("--bands", type=int, default=8)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--shingle-size", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="only the first N rows")
    parser.add_argument("--hashfunc", choices=("sha1", "xxhash"), default="sha1", help="datasketch only")
    keep = parser.add_mutually_exclusive_group()
    keep.add_argument("--keep-shingles", dest="keep_shingles", action="store_true", default=None)
    keep.add_argument("--recompute-shingles", dest="keep_shingles", action="store_false")
    parser.add_argument("--pairs-out", help="optional CSV path for the accepted duplicate pairs")
    args = parser.parse_args(argv)
    common = {
        "threshold": args.threshold,
        "num_perm": args.num_perm,
        "bands": args.bands,
        "rows": args.rows,
        "shingle_size": args.shingle_size,
        "keep_shingles": args.keep_shingles,
        "limit": args.limit,
    }
    if args.engine == "datasketch":
        result = run_datasketch(args.path, hashfunc=args.hashfunc, **common)
    else:
        result = run_rensa(args.path, **common)
    if args.pairs_out:
        with open(args.pairs_out, "w", encoding="utf-8") as handle:
            handle.write("left_doc_id,right_doc_id\n")
            handle.writelines(f"{left},{right}\n" for left, right in sorted(result["duplicate_pairs"]))
    print(json.dumps(summary(result), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
