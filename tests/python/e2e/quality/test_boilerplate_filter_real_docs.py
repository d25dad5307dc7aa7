"""boilerplate_filter on real documentation HTML (real_docs/README.md: 31 pages of the Cargo book and the
Rust Reference, mdbook sites with a shared sidebar and help text), written as WARC with planted mirrors on
another host and one-word revisions, read by the pipeline (Resiliparse's main text), against an
independent brute force of the filter over the extracted bodies.

Without the filter distinct pages of these sites merge under the spec's rule (brute force over the
bodies); with it none does and every planted copy still joins its original."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from tests.python.helpers import templated_sites as ts
from tests.python.helpers.dbt_runner import run_dbt
from tests.python.helpers.project import project_vars
from tests.python.helpers.real_docs import distinct_pairs_merged, fixture_pages, revise
from tests.python.helpers.warc_fixtures import Corpus, Writer, html_response

pytestmark = pytest.mark.dbt

SITE = "https://doc.rust-lang.org/stable/"
MIRROR = "https://rust-docs.mirror.example/"
MIRRORED = [
    "cargo/commands/build-commands.html",
    "cargo/commands/cargo-fetch.html",
    "reference/keywords.html",
]
REVISED = ["cargo/commands/cargo-search.html", "cargo/commands/cargo-new.html", "reference/identifiers.html"]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    work = tmp_path_factory.mktemp("real_docs")
    writer = Writer(Corpus(work / "warcs"), "docs.warc.gz")
    pages, plants = fixture_pages(), {}

    def write(url: str, html: str, day: int) -> None:
        date = f"2026-11-{day:02d}T10:00:00Z"
        html_response(writer, url, date, "", html, "utf-8", "text/html; charset=utf-8", "", "utf-8")

    for path, html in pages.items():
        write(SITE + path, html, 1)
    for path in MIRRORED:
        write(MIRROR + path, pages[path], 2)
        plants[MIRROR + path] = (SITE + path, "mirror_elsewhere")
    for path in REVISED:
        write(SITE + "revised/" + path, revise(pages[path]), 3)
        plants[SITE + "revised/" + path] = (SITE + path, "revision")
    run_dbt(
        ["build"],
        db_path=work / "db.duckdb",
        dbt_vars={
            "warc_paths": str(work / "warcs"),
            "output_dir": str(work / "out"),
            "boilerplate_filter": True,
        },
    )
    con = duckdb.connect(str(work / "db.duckdb"), read_only=True)
    try:
        documents = con.sql(
            "select doc_id, url, domain, body from main_internal.stg_documents"
        ).to_arrow_table()
        clusters = dict(con.sql("select doc_id, cluster_id from clusters").fetchall())
        texts = dict(con.sql("select doc_id, body from main_internal.int_shingle_texts").fetchall())
    finally:
        con.close()
    url_of = dict(zip(documents["doc_id"].to_pylist(), documents["url"].to_pylist(), strict=True))
    # everything keyed by URL: the test's own names for the pages
    by_url = pa.table(
        {
            "doc_id": [url_of[d] for d in documents["doc_id"].to_pylist()],
            "domain": documents["domain"],
            "body": documents["body"],
        }
    )
    clusters = {url_of[d]: c for d, c in clusters.items()}
    texts = {url_of[d]: t for d, t in texts.items()}
    return pages, plants, by_url, clusters, texts


def test_every_page_is_read_and_the_template_merges_distinct_pages_unfiltered(build):
    pages, plants, documents, _, _ = build
    assert sorted(documents["doc_id"].to_pylist()) == sorted([SITE + p for p in pages] + list(plants))
    bodies = dict(zip(documents["doc_id"].to_pylist(), documents["body"].to_pylist(), strict=True))
    assert all(
        bodies[copy] != bodies[original] for copy, (original, kind) in plants.items() if kind == "revision"
    )
    components = ts.duplicate_components(bodies)
    # the problem the filter solves, on real pages: distinct pages merge without it
    assert len(distinct_pairs_merged(components, bodies, plants)) >= 10
    assert ts.merge_errors(components, plants)[1] == 0


def test_filter_keeps_distinct_real_pages_apart_and_planted_copies_together(build):
    pages, plants, documents, clusters, texts = build
    defaults = project_vars()
    expected = ts.filtered_texts(
        documents, defaults["boilerplate_max_share"], defaults["boilerplate_min_pages"]
    )
    assert texts == expected
    for copy, (original, _) in plants.items():
        assert clusters[copy] == clusters[original], copy
    originals = [SITE + p for p in pages]
    assert len({clusters[d] for d in originals}) == len(originals)
