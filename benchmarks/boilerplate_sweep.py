"""The boilerplate_filter share on generated templated sites (tests/python/helpers/templated_sites.py).

    python benchmarks/boilerplate_sweep.py [--min-pages 10]

For each boilerplate_max_share, the filter's brute force (the rule of int_shingle_texts in plain Python)
and all pairs with the spec's exact Jaccard >= 0.7: prints the pairs of distinct pages merged and the
planted mirrors and revisions not merged with their original; "off" is the unfiltered text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.python.helpers import templated_sites as ts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--min-pages", type=int, default=10)
    args = parser.parse_args(argv)
    table, plants = ts.templated_sites()
    bodies = dict(zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True))
    false_merges, missed = ts.merge_errors(ts.duplicate_components(bodies), plants)
    print(json.dumps({"max_share": "off", "distinct_pairs_merged": false_merges, "plants_missed": missed}))
    for share in (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99):
        texts = ts.filtered_texts(table, share, args.min_pages)
        false_merges, missed = ts.merge_errors(ts.duplicate_components(texts), plants)
        print(
            json.dumps({"max_share": share, "distinct_pairs_merged": false_merges, "plants_missed": missed})
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
