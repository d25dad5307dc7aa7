"""A corpus of long pages made from a corpus of ordinary ones (for memory and time checks on long pages).

Each page joins ``--join`` consecutive bodies of the source corpus from a random place (pages whose places
are close share most of their text, as pages of one documentation site share long passages), and every
seventh page gets a copy cut to its first nine tenths on another doc_id.  The other columns are those of
the source's row of the same number.

    python benchmarks/long_pages.py SOURCE.parquet OUT.parquet --pages 60000 --join 16   # pages of ~58 KB
"""

from __future__ import annotations

import argparse
import random

import pyarrow as pa
import pyarrow.parquet as pq


def long_pages(source: list[dict], pages: int, join: int, seed: int = 1) -> list[dict]:
    """The long pages, in order: page i, then its copy when i is a positive multiple of seven."""
    if len(source) <= join:
        raise ValueError(f"the source has {len(source)} pages: --join {join} needs more")
    rng = random.Random(seed)
    rows = []
    for number in range(pages):
        start = rng.randrange(len(source) - join)
        body = "\n\n".join(source[start + offset]["body"] for offset in range(join))
        row = {**source[number % len(source)], "doc_id": f"long-{number:06d}", "body": body}
        rows.append(row)
        if number % 7 == 0 and number:
            rows.append({**row, "doc_id": f"long-{number:06d}-copy", "body": body[: len(body) * 9 // 10]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a Parquet corpus (generate_corpus.py, prose_corpus.py)")
    parser.add_argument("out", help="the Parquet file to write")
    parser.add_argument("--pages", type=int, default=60_000)
    parser.add_argument("--join", type=int, default=16, help="source bodies per page")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = long_pages(pq.read_table(args.source).to_pylist(), args.pages, args.join, args.seed)
    pq.write_table(pa.Table.from_pylist(rows), args.out, row_group_size=256)
    text = sum(len(row["body"].encode()) for row in rows)
    size = f"{text / 1e9:.2f} GB of text, {text / len(rows) / 1e3:.0f} KB a page"
    print(f"wrote {len(rows):,} pages to {args.out} ({size})")


if __name__ == "__main__":
    main()
