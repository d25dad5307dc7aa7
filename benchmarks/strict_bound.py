"""How many co-clustered pairs any `clustering: strict` partition can keep on chains, against the rules.

    python benchmarks/strict_bound.py [--chains 20] [--length 6] [--seed 7]

On the explicit chains of ``benchmarks/compare_clustering.py`` (``tests/python/helpers/quality_corpora.py``:
each page two words away from the previous one), in plain Python over the spec's reference functions, it
prints the co-clustered document pairs of connected components (the spec), of three greedy strict rules
(the next kept page is: the first unplaced page in representative order; the unplaced page with the most
accepted edges to unplaced pages, ties in representative order; the pipeline's, the first of these when
it is within the threshold of every unplaced page, else the second), and the best any strict partition
can reach: every choice of kept pages and of a kept page at or above the threshold for each other page,
per component (components of at most --max-exhaustive pages).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402

from benchmarks.generate_corpus import generate  # noqa: E402
from tests.python.helpers import quality_corpora as qc  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chains", type=int, default=20)
    parser.add_argument("--length", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-exhaustive", type=int, default=10)
    args = parser.parse_args()
    schema = generate(10, seed=7).schema
    table = pa.Table.from_pylist(qc.chain_rows(args.chains, args.length, seed=args.seed), schema=schema)
    sets = qc.shingle_sets(table)
    doc_ids = table["doc_id"].to_pylist()

    def similar(a: str, b: str) -> bool:
        return qc.jaccard(sets, a, b) >= qc.THRESHOLD

    edges = [(a, b) for a, b in itertools.combinations(sorted(doc_ids), 2) if similar(a, b)]
    order = qc.representative_order(table, qc.token_counts(table))
    neighbours = defaultdict(set)
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    members = defaultdict(list)
    for doc, component in qc.components(doc_ids, edges).items():
        members[component].append(doc)
    rules = {
        "order": lambda d, unplaced: order[d],
        "degree": lambda d, unplaced: (-len(neighbours[d] & unplaced), order[d]),
    }
    greedy = {name: {} for name in rules}
    for docs in members.values():
        for name, rule in rules.items():
            unplaced = set(docs)
            while unplaced:
                kept = min(unplaced, key=lambda d, rule=rule, unplaced=unplaced: rule(d, unplaced))
                placed = {d for d in unplaced if d == kept or similar(d, kept)}
                greedy[name].update(dict.fromkeys(placed, kept))
                unplaced -= placed
    components = len(qc.co_clustered_pairs(qc.kept_for(table, edges, strict=False)))
    rows = {
        "strict, greedy in representative order": len(qc.co_clustered_pairs(greedy["order"])),
        "strict, greedy by accepted edges to unplaced pages": len(qc.co_clustered_pairs(greedy["degree"])),
        "strict, the pipeline's rule (quality_corpora.kept_for)": len(
            qc.co_clustered_pairs(qc.kept_for(table, edges, strict=True))
        ),
    }
    large = [docs for docs in members.values() if len(docs) > args.max_exhaustive]
    if not large:
        rows["strict, best partition (exhaustive)"] = sum(
            qc.best_strict_partition(sorted(docs), similar) for docs in members.values()
        )
    print(f"{args.chains} chains of {args.length} pages: {len(edges)} pairs at or above the threshold")
    print(f"{'components (the spec)':<64} {components:>6} co-clustered pairs")
    for label, count in rows.items():
        print(f"{label:<64} {count:>6} ({count / components:.1%})")


if __name__ == "__main__":
    main()
