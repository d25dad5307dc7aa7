"""A corpus of real prose with many near-duplicates, for measuring the pipeline beyond the generator.

    python benchmarks/prose_corpus.py --html '/path/to/docs/**/*.html' [--html ...] --docs 1000000 \
        --out corpus.parquet [--duplicate-share 0.49] [--median-paragraphs 8] [--seed 7]

The paragraphs (lines of eight words or more) of real HTML pages' main text (Resiliparse, as the WARC path
reads it) are the vocabulary: every original page is a random sample of paragraphs (a log-normal number
of them, so page lengths vary from a few lines to long articles), and a `--duplicate-share` of the pages
are copies of an earlier page, most of them on another domain: exact copies, one-in-N word edits at rates
from 0.5% to 15% (near the 0.7 threshold and on both sides of it), a paragraph dropped or appended.  Which
original is copied: a fifth of the copies are of the first 1,000 originals (clusters of about a hundred
pages at 1M documents), the others of any original (most have none or one).
Documents are written in row groups of 10,000 in doc_id order; the same arguments give the same file.
"""

from __future__ import annotations

import argparse
import glob
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.generate_corpus import SCHEMA

ROW_GROUP = 10_000
POPULAR = 1_000
EDIT_RATES = (0.005, 0.01, 0.02, 0.04, 0.08, 0.15)


def paragraphs(globs: list[str]) -> list[str]:
    """The distinct lines of eight words or more of the pages' main text, in file-name order."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    seen: dict[str, None] = {}
    for path in sorted({p for pattern in globs for p in glob.glob(pattern, recursive=True)}):
        raw = Path(path).read_bytes()
        text = extract_plain_text(bytes_to_str(raw, detect_encoding(raw)), main_content=True)
        for line in text.split("\n"):
            line = " ".join(line.split())
            if len(line.split()) >= 8:
                seen.setdefault(line, None)
    if not seen:
        raise SystemExit(f"prose_corpus: no paragraph of eight words or more in {globs}")
    return list(seen)


def _copy(original: str, rng: np.random.Generator, pool: list[str]) -> tuple[str, str]:
    kind = rng.choice(["exact", "edit", "edit", "edit", "drop", "append"])
    if kind == "exact":
        return original, kind
    lines = original.split("\n")
    if kind == "drop" and len(lines) > 2:
        del lines[int(rng.integers(len(lines)))]
        return "\n".join(lines), kind
    if kind == "append" or kind == "drop":
        lines.insert(int(rng.integers(len(lines) + 1)), pool[int(rng.integers(len(pool)))])
        return "\n".join(lines), "append"
    rate = EDIT_RATES[int(rng.integers(len(EDIT_RATES)))]
    words = original.split(" ")
    hits = np.nonzero(rng.random(len(words)) < rate)[0]
    for index in hits:
        words[index] = f"edit{int(rng.integers(1_000_000))}"
    return " ".join(words), f"edit {rate}"


def pages(docs: int, pool: list[str], duplicate_share: float, median: float, seed: int):
    """Yield (doc_id, source, domain, crawled_at, title, body, group_id) in doc_id order."""
    rng = np.random.default_rng(seed)
    domains = [f"docs{index:04d}.prose.example" for index in range(2000)]
    start = datetime(2026, 1, 1)
    originals: list[int] = []
    bodies: dict[int, str] = {}
    for index in range(docs):
        is_copy = originals and rng.random() < duplicate_share
        if is_copy:
            # a fifth of the copies are of the first POPULAR originals (clusters of ~100 pages at 1M)
            chosen = int(rng.integers(min(POPULAR, len(originals)) if rng.random() < 0.2 else len(originals)))
            origin = originals[chosen]
            body, kind = _copy(bodies[origin], rng, pool)
            group = f"page-{origin:08d}"
            source = f"copy:{kind}"
        else:
            count = int(np.clip(rng.lognormal(np.log(median), 0.9), 1, 120))
            body = "\n".join(pool[int(i)] for i in rng.integers(len(pool), size=count))
            originals.append(index)
            bodies[index] = body
            group, source = None, "original"
        domain = domains[int(rng.integers(len(domains)))]
        crawled = start + timedelta(seconds=int(rng.integers(300 * 86400)))
        yield (f"page-{index:08d}", source, domain, crawled, body.split("\n", 1)[0][:80], body, group)


def write(path: Path, rows, docs: int) -> None:
    partial = path.with_suffix(".partial")
    with pq.ParquetWriter(partial, SCHEMA, compression="zstd") as writer:
        batch: list[tuple] = []
        for row in rows:
            batch.append(row)
            if len(batch) == ROW_GROUP:
                writer.write_table(
                    pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in batch], SCHEMA)
                )
                batch = []
        if batch:
            writer.write_table(
                pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in batch], SCHEMA)
            )
    partial.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--html", action="append", required=True, metavar="GLOB")
    parser.add_argument("--docs", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--duplicate-share", type=float, default=0.49)
    parser.add_argument("--median-paragraphs", type=float, default=8)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    pool = paragraphs(args.html)
    print(f"{len(pool):,} distinct paragraphs", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write(
        args.out, pages(args.docs, pool, args.duplicate_share, args.median_paragraphs, args.seed), args.docs
    )
    print(f"wrote {args.docs:,} pages to {args.out} ({args.out.stat().st_size / 1e9:.2f} GB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
