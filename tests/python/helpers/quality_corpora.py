"""Generated corpora and an independent brute force for the quality tests (removals, strict clustering,
the per-source guardrail): plain Python over the spec's reference functions, no pipeline code."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections import defaultdict, deque

import pyarrow as pa

from benchmarks.generate_corpus import generate
from webdedup.core import reference as ref

THRESHOLD = ref.SHINGLE_JACCARD_THRESHOLD


def _random_words(rng: random.Random, n: int) -> list[str]:
    return [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(n)
    ]


def chain_rows(n_chains: int, length: int, seed: int) -> list[dict]:
    """Chains: each page is the previous one with 2 more words replaced (about J 0.8 to its neighbour,
    falling below 0.7 two or three steps away); the last page of a chain is the newest (its
    representative), so the first pages are chained to it only through the others."""
    rng = random.Random(seed)
    rows = []
    for c in range(n_chains):
        words = _random_words(rng, 120)
        for step in range(length):
            if step:
                for _ in range(2):
                    words[rng.randrange(len(words))] = f"edit{c}x{step}x{rng.randrange(10**6)}"
            rows.append(
                {
                    "doc_id": f"chain{c:02d}-{step}",
                    "source": "chain",
                    "domain": f"chain{c}.example",
                    "crawled_at": dt.datetime(2024, 1, 1) + dt.timedelta(days=step),
                    "title": f"chain {c} step {step}",
                    "body": " ".join(words),
                }
            )
    return rows


def copies_rows(source: str, pages: int, distinct: int, seed: int) -> list[dict]:
    """A source of `pages` pages that are byte-identical copies of `distinct` unrelated bodies, so that
    exactly pages - distinct of them are removed."""
    rng = random.Random(seed)
    bodies = [" ".join(_random_words(rng, 80)) for _ in range(distinct)]
    return [
        {
            "doc_id": f"{source}-{i:03d}",
            "source": source,
            "domain": f"{source}.example",
            "crawled_at": dt.datetime(2024, 3, 1) + dt.timedelta(days=i % 7),
            "title": f"{source} {i}",
            "body": bodies[i % distinct],
        }
        for i in range(pages)
    ]


def quality_corpus() -> pa.Table:
    """generate()'s planted groups (revisions, near-threshold variants: chains through the original),
    explicit chains, and two sources of copies: 96% and 90% removable."""
    generated = generate(400, seed=11, near_threshold_share=0.3).drop_columns(["group_id"]).to_pylist()
    rows = (
        generated
        + chain_rows(6, 6, seed=5)
        + copies_rows("heavy", 100, 4, seed=1)  # 96 of 100 removed
        + copies_rows("light", 100, 10, seed=2)  # 90 of 100 removed
    )
    return pa.Table.from_pylist(rows)


# ---------------------------------------------------------------------------------------------------
# Brute force


def shingle_sets(table: pa.Table) -> dict[str, frozenset]:
    return {
        d: frozenset(ref.token_shingles(ref.normalize_text(b).split()))
        for d, b in zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True)
    }


def token_counts(table: pa.Table) -> dict[str, int]:
    return {
        d: len(ref.normalize_text(b).split())
        for d, b in zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True)
    }


def jaccard(sets: dict, a: str, b: str) -> float:
    return ref.jaccard(sets[a], sets[b])


def components(doc_ids, edges) -> dict[str, str]:
    """doc_id -> smallest doc_id of its connected component."""
    parent = {d: d for d in doc_ids}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {d: find(d) for d in doc_ids}


def representative_order(table: pa.Table, tokens: dict[str, int]) -> dict[str, tuple]:
    """Sort key of the representative order: newest crawled_at, then more tokens, then smallest doc_id."""
    keys = {}
    for row in table.select(["doc_id", "crawled_at"]).to_pylist():
        stamp = row["crawled_at"]
        keys[row["doc_id"]] = (
            stamp is None,
            -(stamp.timestamp() if stamp else 0),
            -tokens[row["doc_id"]],
            row["doc_id"],
        )
    return keys


def kept_for(table: pa.Table, edges, *, strict: bool, threshold: float = THRESHOLD) -> dict[str, str]:
    """doc_id -> the representative kept for it, by the components rule or the strict greedy rule: the
    first unplaced page in representative order if all unplaced pages are within the threshold of it,
    else the unplaced page with the most edges to unplaced pages (ties: representative order)."""
    doc_ids = table["doc_id"].to_pylist()
    sets = shingle_sets(table)
    order = representative_order(table, token_counts(table))
    neighbours = defaultdict(set)
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    members = defaultdict(list)
    for doc, component in components(doc_ids, edges).items():
        members[component].append(doc)

    def similar(doc: str, rep: str) -> bool:
        return doc == rep or jaccard(sets, doc, rep) >= threshold

    kept = {}
    for docs in members.values():
        remaining = sorted(docs, key=order.__getitem__)
        if not strict:
            kept.update({d: remaining[0] for d in remaining})
            continue
        while remaining:
            rep = remaining[0]
            if not all(similar(d, rep) for d in remaining):
                unplaced = set(remaining)
                rep = min(remaining, key=lambda d: (-len(neighbours[d] & unplaced), order[d]))
            placed = [d for d in remaining if similar(d, rep)]
            kept.update({d: rep for d in placed})
            remaining = [d for d in remaining if d not in placed]
    return kept


def shortest_hops(edges, source: str) -> dict[str, int]:
    adjacency = defaultdict(set)
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    hops, queue = {source: 0}, deque([source])
    while queue:
        node = queue.popleft()
        for other in adjacency[node]:
            if other not in hops:
                hops[other] = hops[node] + 1
                queue.append(other)
    return hops


def best_strict_partition(docs: list[str], similar) -> int:
    """The most co-clustered pairs any strict partition of one component can keep (exhaustive: every
    set of kept pages, and for each other page every kept page it is similar to)."""
    best = 0
    for mask in range(1, 2 ** len(docs)):
        kept = [d for i, d in enumerate(docs) if mask >> i & 1]
        choices = [[k for k in kept if similar(d, k)] for d in docs if d not in kept]
        if all(choices):
            for assignment in itertools.product(*choices):
                sizes = dict.fromkeys(kept, 1)
                for k in assignment:
                    sizes[k] += 1
                best = max(best, sum(n * (n - 1) // 2 for n in sizes.values()))
    return best


def co_clustered_pairs(kept: dict[str, str]) -> set[tuple[str, str]]:
    by_rep = defaultdict(list)
    for doc, rep in kept.items():
        by_rep[rep].append(doc)
    return {(a, b) for docs in by_rep.values() for a in docs for b in docs if a < b}
