"""WARC input at scale: a generated crawl written as WARC files, read by `dbt build` three ways.

Pages come from ``benchmarks/generate_corpus.py`` (with its planted near-duplicates), each wrapped in an
HTML page (title, navigation, one ``<p>`` per sentence, footer) and written with FastWARC the way
Common Crawl writes its files: per page a request and a response record, each its own gzip member, in
files of ``--pages-per-file`` pages.  In one invocation, on the same files:

1. ``dbt build`` reading every file in this process (the default, ``warc_workers: 1``): the baseline;
2. ``dbt build`` reading every file with ``warc_workers: 2`` (one worker process per core), from scratch;
3. one more file of ``--add`` pages is put in the folder and ``dbt build`` runs again on run 2's
   database: files read before are reused (their ``read_key`` is stored), only the new one is read.

Prints wall time, peak RSS, the ``stg_warc_records`` stage and its throughput for each run.

Usage::

    python benchmarks/warc_benchmark.py --pages 50000 [--pages-per-file 10000] [--add 500]
        [--work bench_work/warc-50000]
"""

from __future__ import annotations

import argparse
import gzip
import html
import io
import json
import shutil
import sys
import uuid
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # make ``benchmarks``, ``webdedup`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import generate_corpus
from benchmarks.run_benchmark import ROOT, resolve_rss_method, run_dbt

DATE = "2024-05-01T10:00:00Z"
NAV = '<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About us</a></nav>'


def _record(record_type, url: str, block: bytes, content_type: str) -> bytes:
    """One WARC record (FastWARC's writer), compressed as its own gzip member."""
    from fastwarc.warc import WarcRecord

    record = WarcRecord()
    urn = f"uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{record_type} {url}')}".encode()
    record.init_headers(record_type=record_type, record_urn=urn)
    record.headers.set("WARC-Date", DATE)  # a fixed date: the same arguments write the same files
    record.headers.append("WARC-Target-URI", url)
    record.headers.append("Content-Type", content_type)
    record.set_bytes_content(block)
    buffer = io.BytesIO()
    record.write(buffer)
    return gzip.compress(buffer.getvalue(), compresslevel=6, mtime=0)


def write_warc(path: Path, pages, tag: str) -> int:
    """Write ``pages`` (rows with doc_id, title, body) as one WARC.gz file; returns its size in bytes."""
    from fastwarc.warc import WarcRecordType

    with path.open("wb") as out:
        for page in pages:
            url = f"https://{page['domain'] or 'site.example'}/{tag}/{page['doc_id']}"
            title = html.escape(page["title"] or "")
            paragraphs = "".join(f"<p>{html.escape(s)}</p>" for s in (page["body"] or "").split(". "))
            document = (
                f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head><body>'
                f"{NAV}<main><article><h1>{title}</h1>{paragraphs}</article></main>"
                "<footer>All rights reserved.</footer></body></html>"
            ).encode()
            host = url.split("/")[2]
            request = f"GET /{tag}/{page['doc_id']} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
            response = (
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                + f"Content-Length: {len(document)}\r\n\r\n".encode()
                + document
            )
            out.write(_record(WarcRecordType.request, url, request, "application/http; msgtype=request"))
            out.write(_record(WarcRecordType.response, url, response, "application/http; msgtype=response"))
    return path.stat().st_size


def write_crawl(folder: Path, pages: int, per_file: int, seed: int) -> int:
    """The crawl folder: ``pages`` generated pages in files of ``per_file``; returns the bytes written."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    table = generate_corpus.generate(pages, seed=seed)
    size = 0
    for start in range(0, pages, per_file):
        rows = table.slice(start, per_file).to_pylist()
        size += write_warc(folder / f"crawl-{start // per_file:04d}.warc.gz", rows, f"s{seed}")
    return size


def _stage(result: dict, name: str) -> float | None:
    return next((stage["seconds"] for stage in result.get("stages", []) if stage["name"] == name), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--pages-per-file", type=int, default=10000)
    parser.add_argument("--add", type=int, default=500, help="pages in the file added for run 3")
    parser.add_argument("--seed", type=int, default=generate_corpus.DEFAULT_SEED)
    parser.add_argument("--work", help="work directory (default: bench_work/warc-<pages>)")
    parser.add_argument("--memory-limit", default="8GB")
    args = parser.parse_args(argv)
    work = Path(args.work or ROOT / "bench_work" / f"warc-{args.pages}").resolve()
    folder = work / "warcs"
    print(f"writing {args.pages:,} pages as WARC files ...", file=sys.stderr, flush=True)
    size = write_crawl(folder, args.pages, args.pages_per_file, args.seed)
    options = {"threads": 2, "memory_limit": args.memory_limit, "skip_tests": False}
    options["rss_method"] = resolve_rss_method("auto")
    runs = {}
    for name, dbt_vars, fresh in (
        ("in-process (warc_workers 1)", {"warc_workers": 1}, True),
        ("2 worker processes", {"warc_workers": 2}, True),
    ):
        print(f"dbt build: {name} ...", file=sys.stderr, flush=True)
        runs[name] = run_dbt(
            None, work / "run", fresh=fresh, extra_vars={"warc_paths": str(folder), **dbt_vars}, **options
        )
    added = generate_corpus.generate(args.add, seed=args.seed + 1).to_pylist()
    added_size = write_warc(folder / "crawl-new.warc.gz", added, f"s{args.seed + 1}")
    print("dbt build after adding a file ...", file=sys.stderr, flush=True)
    name = f"a file of {args.add:,} pages added"
    runs[name] = run_dbt(None, work / "run", fresh=False, extra_vars={"warc_paths": str(folder)}, **options)

    print(
        f"\n{args.pages:,} pages in {len(list(folder.glob('crawl-0*.warc.gz')))} WARC files,"
        f" {size / 1e6:,.1f} MB (+ {added_size / 1e6:,.1f} MB added for the last run)"
    )
    print(f"{'run':32} {'wall s':>8} {'peak RSS MB':>12} {'stg_warc_records s':>19} {'WARC MB/s':>10}")
    for name, result in runs.items():
        stage = _stage(result, "stg_warc_records")
        read = added_size if name.startswith("a file") else size
        rate = f"{read / 1e6 / stage:10.1f}" if stage else f"{'-':>10}"
        status = (
            "" if result["returncode"] == 0 else f"  FAILED (exit {result['returncode']}, {result['log']})"
        )
        print(
            f"{name:32} {result['wall_seconds']:8.2f} {result['peak_rss_mb'] or 0:12,.0f}"
            f" {stage or 0:19.2f} {rate}{status}"
        )
    (work / "results.json").write_text(json.dumps(runs, indent=2, default=str) + "\n", encoding="utf-8")
    return 1 if any(result["returncode"] != 0 for result in runs.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
