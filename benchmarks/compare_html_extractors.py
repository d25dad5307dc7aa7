"""Compare FastWARC + Resiliparse with warcio + trafilatura on real HTML pages (the WARC library choice).

Writes the pages into an in-memory WARC (one gzip member per response record), then measures the time to
read every record with each WARC library, the time to extract title + main text with each extractor, and
the extractors' token precision / recall against each page's <main> element (mdBook pages keep their
content there and a large navigation sidebar outside it).

warcio, trafilatura and lxml are not project dependencies; run it in a scratch virtualenv:

    python3 -m venv /tmp/extractors && /tmp/extractors/bin/pip install fastwarc==2.0.0 resiliparse==2.0.0 \
        warcio==1.8.1 trafilatura==2.3.1 lxml_html_clean
    /tmp/extractors/bin/python benchmarks/compare_html_extractors.py \
        "$HOME/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/book/*.html" ...
"""

from __future__ import annotations

import argparse
import glob
import io
import re
import statistics
import time
from collections import Counter
from pathlib import Path


def main() -> None:
    import lxml.html
    import trafilatura
    from fastwarc.warc import ArchiveIterator as FastIterator
    from fastwarc.warc import WarcRecordType
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from resiliparse.parse.html import HTMLTree
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("globs", nargs="+", help="globs of HTML files")
    parser.add_argument("--pages", type=int, default=400)
    args = parser.parse_args()
    files = sorted(f for g in args.globs for f in glob.glob(g))[: args.pages]
    pages = [Path(f).read_bytes() for f in files]
    print(f"{len(pages)} pages, {sum(map(len, pages)) / len(pages) / 1024:.1f} KB average")

    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    for i, page in enumerate(pages):
        headers = StatusAndHeaders(
            "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
        )
        writer.write_record(
            writer.create_warc_record(
                f"https://example.org/{i}", "response", payload=io.BytesIO(page), http_headers=headers
            )
        )
    data = buffer.getvalue()

    def read_fastwarc():
        return [
            r.reader.read()
            for r in FastIterator(io.BytesIO(data), record_types=WarcRecordType.response, parse_http=True)
        ]

    def read_warcio():
        return [
            r.content_stream().read() for r in WarcioIterator(io.BytesIO(data)) if r.rec_type == "response"
        ]

    for name, read in [("fastwarc", read_fastwarc), ("warcio", read_warcio)]:
        read()
        start = time.perf_counter()
        payloads = read()
        elapsed = time.perf_counter() - start
        assert payloads == pages
        print(f"read {name}: {elapsed / len(pages) * 1e6:.1f} us/record")

    def tokens(text):
        return Counter(re.findall(r"\w+", text.lower()))

    def reference(page):
        main = lxml.html.fromstring(page).xpath("//main")
        return tokens(main[0].text_content()) if main else None

    def resiliparse(page):
        tree = HTMLTree.parse(bytes_to_str(page, detect_encoding(page, from_html_meta=True)))
        return tree.title, extract_plain_text(tree, main_content=True, alt_texts=False)

    def trafilatura_extract(page):
        metadata = trafilatura.extract_metadata(page)
        return (metadata.title if metadata else None), trafilatura.extract(page, include_tables=True) or ""

    references = [reference(p) for p in pages]
    for name, extract in [("resiliparse", resiliparse), ("trafilatura", trafilatura_extract)]:
        start = time.perf_counter()
        outputs = [extract(p) for p in pages]
        elapsed = time.perf_counter() - start
        precision, recall = [], []
        for (_, text), ref in zip(outputs, references, strict=True):
            if ref:
                got = tokens(text)
                common = sum((got & ref).values())
                precision.append(common / max(1, sum(got.values())))
                recall.append(common / max(1, sum(ref.values())))
        print(
            f"extract {name}: {elapsed / len(pages) * 1e3:.2f} ms/page, token precision vs <main> "
            f"{statistics.mean(precision):.3f}, recall {statistics.mean(recall):.3f}, "
            f"titles {sum(1 for t, _ in outputs if t)} of {len(pages)}"
        )


if __name__ == "__main__":
    main()
