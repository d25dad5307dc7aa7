"""Real HTML pages for the boilerplate filter's checks: the pages of
tests/python/e2e/quality/real_docs/ (or any folder of a documentation site, in
benchmarks/boilerplate_sweep.py --html), their main text as the pipeline extracts it, and planted copies:
the same HTML on another host (a mirror) and a one-word revision."""

from __future__ import annotations

import re
import tarfile
from itertools import combinations
from pathlib import Path

import pyarrow as pa

from webdedup.warc.extract import extract_html

FIXTURE = Path(__file__).parents[1] / "e2e" / "quality" / "real_docs" / "rust_docs_pages.tar.xz"


def fixture_pages() -> dict[str, str]:
    """Relative path -> HTML of the pages in the test fixture."""
    with tarfile.open(FIXTURE) as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile()), key=lambda m: m.name)
        return {m.name: tar.extractfile(m).read().decode("utf-8") for m in members}


def revise(html: str) -> str:
    """Replace one word (six letters or more) of the first paragraph of the page's main content."""
    main = html.find("<main")
    main = max(main, 0)
    for paragraph in re.finditer(r"<p>(.*?)</p>", html[main:], re.S):
        for text in re.finditer(r"(?:^|>)([^<]+)", paragraph.group(1)):
            word = re.search(r"\b[a-z]{6,}\b", text.group(1))
            if word:
                at = main + paragraph.start(1) + text.start(1) + word.start()
                return html[:at] + "rewritten" + html[at + len(word.group()) :]
    raise ValueError("no paragraph with a word to revise")


def planted_table(sites: dict[str, dict[str, str]], every: int = 10) -> tuple[pa.Table, dict]:
    """(table of doc_id, domain, body: Resiliparse's main text, plants) for {domain: {path: html}}:
    every ``every``-th page of a site is mirrored on ``mirror.<domain>`` and every ``every``-th (from
    the middle) gets a one-word revision; plants maps each copy to (original, kind)."""
    rows, plants = [], {}

    def add(doc_id: str, domain: str, html: str) -> None:
        rows.append({"doc_id": doc_id, "domain": domain, "body": extract_html(html)[1]})

    for domain, pages in sites.items():
        for i, (path, html) in enumerate(sorted(pages.items())):
            add(f"{domain}/{path}", domain, html)
            if i % every == 0:
                add(f"mirror.{domain}/{path}", f"mirror.{domain}", html)
                plants[f"mirror.{domain}/{path}"] = (f"{domain}/{path}", "mirror_elsewhere")
            if i % every == every // 2:
                try:
                    revised = revise(html)
                except ValueError:
                    continue
                add(f"{domain}/revised/{path}", domain, revised)
                plants[f"{domain}/revised/{path}"] = (f"{domain}/{path}", "revision")
    return pa.Table.from_pylist(rows), plants


def distinct_pairs_merged(components: dict[str, str], bodies: dict[str, str], plants: dict) -> list:
    """Pairs of original pages (not planted) in one component whose extracted bodies differ (pages with
    the same body are copies: they must merge)."""
    by_component: dict[str, list[str]] = {}
    for doc, component in components.items():
        if doc not in plants:
            by_component.setdefault(component, []).append(doc)
    return [
        (a, b)
        for members in by_component.values()
        for a, b in combinations(sorted(members), 2)
        if bodies[a] != bodies[b]
    ]
