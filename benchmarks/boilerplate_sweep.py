"""The boilerplate_filter share on generated templated sites (tests/python/helpers/templated_sites.py),
or on real HTML pages of documentation sites.

    python benchmarks/boilerplate_sweep.py [--min-pages 10]
    python benchmarks/boilerplate_sweep.py --html 'docs.example=/path/to/site/**/*.html' [--html ...]

For each boilerplate_max_share, the filter's brute force (the rule of int_shingle_texts in plain Python)
and all pairs with the spec's exact Jaccard >= 0.7: prints the pairs of distinct pages merged and the
planted mirrors and revisions not merged with their original; "off" is the unfiltered text.  With
--html (one per site: a domain and a glob of its pages, read as they are), the pages' main text is
Resiliparse's, as in the WARC path; every 10th page is mirrored on another domain and every 10th gets
a one-word revision (tests/python/helpers/real_docs.py); "distinct" pages are those whose extracted
bodies differ; the pairs merged and the plants missed at --show-share are listed with their Jaccard.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.python.helpers import real_docs
from tests.python.helpers import templated_sites as ts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--min-pages", type=int, default=10)
    parser.add_argument("--html", action="append", default=[], metavar="DOMAIN=GLOB")
    parser.add_argument("--show-share", type=float, default=0.2)
    args = parser.parse_args(argv)
    if args.html:
        table, plants = real_docs.planted_table(_html_sites(args.html))
    else:
        table, plants = ts.templated_sites()
    bodies = dict(zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True))
    print(json.dumps({"pages": len(bodies) - len(plants), "plants": len(plants)}))
    for share in ("off", 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99):
        texts = bodies if share == "off" else ts.filtered_texts(table, share, args.min_pages)
        components = ts.duplicate_components(texts)
        missed = ts.merge_errors(components, plants)[1]
        merged = real_docs.distinct_pairs_merged(components, bodies, plants)
        print(json.dumps({"max_share": share, "distinct_pairs_merged": len(merged), "plants_missed": missed}))
        if args.html and share == args.show_share:
            for a, b in merged:
                print(f"    merged {ts.reference_jaccard(texts[a], texts[b]):.3f}  {a}  {b}")
            for copy, (original, kind) in plants.items():
                if components[copy] != components[original]:
                    words = len((texts[original] or "").split())
                    jaccard = ts.reference_jaccard(texts[copy], texts[original])
                    print(f"    missed {jaccard:.3f}  {kind} of {original} ({words} words)")
    return 0


def _html_sites(specs: list[str]) -> dict[str, dict[str, str]]:
    sites = {}
    for spec in specs:
        domain, pattern = spec.split("=", 1)
        paths = sorted(glob.glob(pattern, recursive=True))
        root = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
        sites[domain] = {
            os.path.relpath(p, root): Path(p).read_text(encoding="utf-8", errors="replace") for p in paths
        }
    return sites


if __name__ == "__main__":
    raise SystemExit(main())
