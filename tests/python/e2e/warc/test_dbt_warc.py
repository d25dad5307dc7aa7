"""`dbt build` on WARC input: a folder of WARC files (var warc_paths) and a Common Crawl style byte-range
table pointing into them (var warc_ranges_path) give the same documents; counts per status, lineage,
titles and decoded text are those the test writer wrote; bad settings stop the build with a clear message."""

import json
from collections import Counter

import duckdb
import pytest

from tests.python.helpers.dbt_runner import run_dbt
from tests.python.helpers.outputs import unordered_outputs
from tests.python.helpers.warc_fixtures import (
    ARTICLE,
    NEWS_NAV,
    Writer,
    _page,
    _paragraphs,
    build_corpus,
    html_response,
    write_ranges_csv,
)

pytestmark = pytest.mark.dbt

LINEAGE = [
    "url",
    "warc_filename",
    "warc_record_offset",
    "warc_record_length",
    "warc_record_id",
    "content_digest",
]


def _table(db_path, sql):
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        relation = con.sql(sql)
        return [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    work = tmp_path_factory.mktemp("dbt_warc")
    corpus = build_corpus(work / "warcs")
    # the range table sits next to the files: relative warc_filename values resolve from its folder
    ranges = write_ranges_csv(corpus, work / "warcs" / "ranges.csv")
    results = {}
    for mode, dbt_vars in {
        "files": {"warc_paths": str(work / "warcs")},
        "ranges": {"warc_ranges_path": str(ranges)},
    }.items():
        run = work / mode
        run.mkdir()
        log = run_dbt(
            ["build"],
            db_path=run / "db.duckdb",
            dbt_vars={**dbt_vars, "output_dir": str(run / "out")},
        ).stdout
        results[mode] = {"db": run / "published" / "db.duckdb", "out": run / "out", "log": log}
    return corpus, results


def test_counts_per_status_are_reported_and_logged(runs):
    corpus, results = runs
    expected = Counter(w.kind for w in corpus.written)
    report = _table(results["files"]["db"], "select status, records from warc_read_report")
    assert {r["status"]: r["records"] for r in report} == {
        status: expected.get(status, 0)
        for status in [
            "extracted",
            "skipped_non_html",
            "skipped_status",
            "skipped_revisit",
            "skipped_request",
            "skipped_other_type",
            "error",
        ]
    }
    assert (
        "[warc] 17 record(s) (17 read now from 3 file(s) or range(s), 0 reused): extracted 8,"
        " skipped_non_html 1, skipped_status 1" in results["files"]["log"]
    )
    for w in corpus.written:
        if w.kind == "error":
            assert f"[warc] error in {w.filename} at offset {w.offset}: " in results["files"]["log"]
    # the range table lists every span but the garbage between two members
    ranged = _table(
        results["ranges"]["db"], "select status, count(*) as n from main_internal.stg_warc_records group by 1"
    )
    listed = Counter(w.kind for w in corpus.written if w.in_range_table)
    assert {r["status"]: r["n"] for r in ranged} == dict(listed)


def test_documents_carry_lineage_titles_and_decoded_text(runs):
    corpus, results = runs
    documents = {
        (d["warc_filename"], d["warc_record_offset"]): d
        for d in _table(results["files"]["db"], "select * from main_internal.stg_documents")
    }
    assert len(documents) == len(corpus.extracted())
    for w in corpus.extracted():
        d = documents[(w.filename, w.offset)]
        assert (d["doc_id"], d["url"], d["warc_record_length"], d["warc_record_id"], d["content_digest"]) == (
            w.record_id[1:-1],
            w.url,
            w.length,
            w.record_id,
            w.content_digest,
        )
        assert d["title"] == w.title
        assert w.text in d["body"]
        assert d["source"] == "warc"
    by_domain = {d["domain"]: d for d in documents.values()}
    assert by_domain["www.tokyo-lib.example"]["title"] == "東京の図書館で読み聞かせ会"
    assert "более двадцати тысяч пассажиров" in by_domain["ru.example"]["body"]
    assert "l'été" in by_domain["cafe.example"]["body"]
    assert str(by_domain["news.example"]["crawled_at"]) == "2024-03-01 10:00:00"


def test_both_input_modes_give_the_same_documents_and_outputs(runs):
    _, results = runs
    query = "select * from main_internal.stg_documents order by doc_id"
    files = _table(results["files"]["db"], query)
    assert files == _table(results["ranges"]["db"], query)
    for name in [
        "clusters.csv",
        "duplicate_pairs.csv",
        "deduped_documents.parquet",
        "cluster_inspection.csv",
    ]:
        # the release keeps the input's record order, and the two modes list the files differently
        order = " order by all" if name in unordered_outputs() else ""
        a = duckdb.sql(f"select * from '{results['files']['out'] / name}'{order}").fetchall()
        assert a == duckdb.sql(f"select * from '{results['ranges']['out'] / name}'{order}").fetchall(), name
    manifests = [json.loads((results[m]["out"] / "manifest.json").read_text()) for m in ("files", "ranges")]
    assert [m["source"]["classification"] for m in manifests] == ["warc_paths", "warc_ranges_path"]
    assert manifests[0]["source"]["input_files"] == ["crawl-a.warc.gz", "crawl-c.warc", "crawl-b.warc.gz"]


def test_the_mirrored_article_is_one_cluster_and_lineage_reaches_the_outputs(runs):
    corpus, results = runs
    out = results["files"]["out"]
    news, mirror = (w for w in corpus.extracted() if "harbour" in w.url)
    inspection = duckdb.sql(f"select * from '{out / 'cluster_inspection.csv'}'")
    rows = [dict(zip(inspection.columns, r, strict=True)) for r in inspection.fetchall()]
    assert {r["url"] for r in rows} == {news.url, mirror.url}
    assert len({r["cluster_id"] for r in rows}) == 1
    for r in rows:
        w = news if r["url"] == news.url else mirror
        assert [r[c] for c in LINEAGE] == [
            w.url,
            w.filename,
            w.offset,
            w.length,
            w.record_id,
            w.content_digest,
        ]
    kept = duckdb.sql(f"select * from '{out / 'deduped_documents.parquet'}'")
    kept_rows = [dict(zip(kept.columns, r, strict=True)) for r in kept.fetchall()]
    assert len(kept_rows) == len(corpus.extracted()) - 1
    for r in kept_rows:
        w = next(w for w in corpus.extracted() if w.url == r["url"])
        assert [r[c] for c in LINEAGE] == [
            w.url,
            w.filename,
            w.offset,
            w.length,
            w.record_id,
            w.content_digest,
        ]


def test_documents_path_and_a_warc_var_together_are_refused(tmp_path):
    result = run_dbt(
        ["build"],
        db_path=tmp_path / "db.duckdb",
        check=False,
        dbt_vars={"documents_path": "x.csv", "warc_paths": "w", "output_dir": str(tmp_path / "out")},
    )
    assert result.returncode != 0
    assert (
        "set either documents_path or warc_paths / warc_ranges_path, not both"
        " (documents_path 'x.csv', warc_paths 'w')" in result.stdout
    )


def test_a_missing_warc_folder_is_named(tmp_path):
    missing = tmp_path / "no-such-folder"
    result = run_dbt(
        ["build"],
        db_path=tmp_path / "db.duckdb",
        check=False,
        dbt_vars={"warc_paths": str(missing), "output_dir": str(tmp_path / "out")},
    )
    assert result.returncode != 0
    assert f"warc_paths '{missing}': no such file or folder" in result.stdout
    assert not (tmp_path / "out" / "deduped_documents.parquet").exists()


def test_a_folder_that_gains_a_warc_file_reads_only_that_file(tmp_path):
    corpus = build_corpus(tmp_path / "warcs")
    dbt_vars = {"warc_paths": str(tmp_path / "warcs"), "output_dir": str(tmp_path / "out")}
    run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars)

    # the next crawl: the news article again under a new URL, and a new page
    writer = Writer(corpus, "crawl-d.warc.gz")
    title = "Harbour bridge reopens – syndicated"
    html_response(
        writer,
        "https://syndicate.example/bridge",
        "2024-04-02T08:00:00Z",
        title,
        _page(title, NEWS_NAV, _paragraphs(ARTICLE), "Syndicated content"),
        "utf-8",
        "text/html; charset=utf-8",
        "four hundred corroded bolts",
        "utf-8",
    )
    title = "Library opening hours change in May"
    text = "From the first of May the central library opens at eight and closes at nine on weekdays. " * 5
    html_response(
        writer,
        "https://library.example/hours",
        "2024-04-02T08:05:00Z",
        title,
        _page(title, "<a href='/'>Home</a>", _paragraphs(text), "City Library"),
        "utf-8",
        "text/html; charset=utf-8",
        "opens at eight",
        "utf-8",
    )
    log = run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars).stdout
    assert "[warc] reused 17 record(s) of 3 file(s) or range(s) read by a past build" in log
    assert "[warc] 19 record(s) (2 read now from 1 file(s) or range(s), 17 reused)" in log
    assert "[fingerprints] done: 2 documents" in log  # only the new pages are fingerprinted

    # the same as reading every file again into a new database
    fresh = {**dbt_vars, "output_dir": str(tmp_path / "fresh-out"), "warc_reread": True}
    (tmp_path / "fresh").mkdir()
    log = run_dbt(["build"], db_path=tmp_path / "fresh" / "db.duckdb", dbt_vars=fresh).stdout
    assert "(19 read now from 4 file(s) or range(s), 0 reused)" in log
    for table in ("stg_warc_records", "stg_documents"):
        query = f"select * from main_internal.{table} order by all"
        assert _table(tmp_path / "published" / "db.duckdb", query) == _table(
            tmp_path / "fresh" / "published" / "db.duckdb", query
        ), table
    for name in ["clusters.csv", "deduped_documents.parquet", "cluster_inspection.csv"]:
        a = duckdb.sql(f"select * from '{tmp_path / 'out' / name}' order by all").fetchall()
        assert a == duckdb.sql(f"select * from '{tmp_path / 'fresh-out' / name}' order by all").fetchall()
    syndicated = duckdb.sql(
        f"select count(distinct cluster_id) from '{tmp_path / 'out' / 'cluster_inspection.csv'}'"
        " where url like '%bridge%' or url like '%harbour%'"
    ).fetchall()
    assert syndicated == [(1,)]  # the syndicated copy joined the article's cluster
