"""documents_path as a folder of Parquet files, a folder of CSV files and a glob: every document is read,
crawled_at accepts dates and timestamps, WARC lineage columns reach deduped_documents and
cluster_inspection unchanged, and a file without a required column (or a folder mixing CSV and
Parquet, or holding a file of another kind) stops the build with the file named."""

import datetime as dt
import gzip
import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.python.helpers.corpora import multilingual_corpus
from tests.python.helpers.dbt_runner import run_dbt

pytestmark = pytest.mark.dbt

LINEAGE = [
    "url",
    "warc_filename",
    "warc_record_offset",
    "warc_record_length",
    "warc_record_id",
    "content_digest",
]


def _documents():
    """The own-data corpus (originals, identical mirrors, one-word revisions) with full WARC lineage."""
    table = multilingual_corpus(n_groups=6).sort_by("doc_id")
    n = table.num_rows
    ids = table["doc_id"].to_pylist()
    return (
        table.drop_columns(["crawled_at"])
        .append_column(
            "crawled_at", pa.array([dt.datetime(2024, 1, 1 + i % 28, i % 24, 30) for i in range(n)])
        )
        .append_column("warc_filename", pa.array([f"crawl-data/seg-{i % 3}/x.warc.gz" for i in range(n)]))
        .append_column("warc_record_length", pa.array([1000 + i for i in range(n)], pa.int64()))
        .append_column("warc_record_id", pa.array([f"<urn:uuid:{d}>" for d in ids]))
        .append_column("content_digest", pa.array([f"sha1:{d}ABC" for d in ids]))
    )


def _build(tmp_path, path, check=True):
    return run_dbt(
        ["build"],
        db_path=tmp_path / "db.duckdb",
        check=check,
        dbt_vars={"documents_path": str(path), "output_dir": str(tmp_path / "out")},
    )


def _rows(sql):
    relation = duckdb.sql(sql)
    return [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]


@pytest.fixture(scope="module")
def parquet_folder_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("parquet_folder")
    table = _documents()
    half = table.num_rows // 2
    (work / "docs" / "2024" / "02").mkdir(parents=True)
    # the first file stores crawled_at as a date, the second as a timestamp
    first = table.slice(0, half)
    dates = pa.array([d.date() for d in first["crawled_at"].to_pylist()], pa.date32())
    first = first.set_column(first.schema.get_field_index("crawled_at"), "crawled_at", dates)
    pq.write_table(first, work / "docs" / "part-0.parquet")
    pq.write_table(table.slice(half), work / "docs" / "2024" / "02" / "part-1.parquet")
    _build(work, work / "docs")
    return work, table, half


def test_every_parquet_file_of_a_folder_is_read_with_dates_and_timestamps(parquet_folder_run):
    work, table, half = parquet_folder_run
    con = duckdb.connect(str(work / "published" / "db.duckdb"), read_only=True)
    got = dict(con.sql("select doc_id, crawled_at from main_internal.stg_documents").fetchall())
    expected = {}
    for i, (doc_id, crawled_at) in enumerate(
        zip(table["doc_id"].to_pylist(), table["crawled_at"].to_pylist(), strict=True)
    ):
        expected[doc_id] = dt.datetime.combine(crawled_at.date(), dt.time()) if i < half else crawled_at
    assert got == expected


def test_lineage_columns_reach_deduped_documents_and_cluster_inspection_unchanged(parquet_folder_run):
    work, table, _ = parquet_folder_run
    source = {r["doc_id"]: r for r in table.to_pylist()}
    kept = pq.read_table(work / "out" / "deduped_documents.parquet")
    for name in LINEAGE:
        assert kept.schema.field(name).type == table.schema.field(name).type, name
    kept_rows = kept.to_pylist()
    assert kept_rows and len(kept_rows) < table.num_rows  # duplicates were removed
    for row in kept_rows:
        assert [row[c] for c in LINEAGE] == [source[row["doc_id"]][c] for c in LINEAGE]
    inspected = _rows(
        f"select * from read_csv('{work / 'out' / 'cluster_inspection.csv'}', all_varchar = true)"
    )
    assert inspected
    for row in inspected:
        assert [row[c] for c in LINEAGE] == [str(source[row["doc_id"]][c]) for c in LINEAGE]


@pytest.fixture(scope="module")
def csv_folder(tmp_path_factory):
    work = tmp_path_factory.mktemp("csv_folder")
    table = _documents()
    n = table.num_rows
    (work / "docs" / "more").mkdir(parents=True)
    con = duckdb.connect()
    parts = {"part-0.csv": (0, n // 3), "part-1.csv": (n // 3, n // 3), "more/part-2.csv": (2 * (n // 3), n)}
    for name, (start, length) in parts.items():
        con.register("part", table.slice(start, length))
        # part-1 writes crawled_at as plain dates, the others as timestamps
        crawled = "strftime(crawled_at, '%Y-%m-%d')" if name == "part-1.csv" else "crawled_at"
        con.sql(
            f"copy (select * replace ({crawled} as crawled_at) from part) to '{work / 'docs' / name}' "
            "(format csv, header true)"
        )
    return work, table, parts


def test_every_csv_file_of_a_folder_is_read_as_text(csv_folder, tmp_path):
    work, table, parts = csv_folder
    _build(tmp_path, work / "docs")
    con = duckdb.connect(str(tmp_path / "published" / "db.duckdb"), read_only=True)
    got = dict(con.sql("select doc_id, crawled_at from main_internal.stg_documents").fetchall())
    start, length = parts["part-1.csv"]
    date_only = set(table["doc_id"].to_pylist()[start : start + length])
    expected = {
        d: (dt.datetime.combine(c.date(), dt.time()) if d in date_only else c)
        for d, c in zip(table["doc_id"].to_pylist(), table["crawled_at"].to_pylist(), strict=True)
    }
    assert got == expected  # ids such as 00042 keep their zeros: every id matches
    offsets = dict(con.sql("select doc_id, warc_record_offset from main_internal.stg_documents").fetchall())
    assert offsets == {r["doc_id"]: str(r["warc_record_offset"]) for r in table.to_pylist()}


def test_a_glob_reads_only_the_files_it_matches(csv_folder, tmp_path):
    work, table, parts = csv_folder
    _build(tmp_path, work / "docs" / "part-*.csv")
    con = duckdb.connect(str(tmp_path / "published" / "db.duckdb"), read_only=True)
    got = {r[0] for r in con.sql("select doc_id from main_internal.stg_documents").fetchall()}
    start, _ = parts["more/part-2.csv"]
    assert got == set(table["doc_id"].to_pylist()[:start])


def test_a_file_of_a_folder_without_a_required_column_is_named(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    header = "doc_id,source,domain,crawled_at,title,body\n"
    (docs / "a.csv").write_text(header + "a,s,d,2024-01-01,t,x\n")
    (docs / "b.csv").write_text("doc_id,source,domain,crawled_at,title\nb,s,d,2024-01-01,t\n")
    result = _build(tmp_path, docs, check=False)
    assert result.returncode != 0
    assert (
        f"documents_path '{docs}': file '{docs / 'b.csv'}' is missing required column(s): body"
        " (found: doc_id, source, domain, crawled_at, title)" in result.stdout
    )
    assert not (tmp_path / "out" / "deduped_documents.parquet").exists()


def test_a_folder_mixing_csv_and_parquet_is_refused(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.csv").write_text("doc_id,source,domain,crawled_at,title,body\na,s,d,2024-01-01,t,x\n")
    pq.write_table(pa.table({"doc_id": ["b"]}), docs / "b.parquet")
    result = _build(tmp_path, docs, check=False)
    assert result.returncode != 0
    assert f"documents_path '{docs}' holds both Parquet (1) and CSV (1) files" in result.stdout


def test_a_folder_reads_every_csv_kind_keeps_apostrophes_and_pages_without_a_source(tmp_path):
    """.csv, .CSV and .csv.gz files are all read (Spark's _SUCCESS and .crc files are skipped), quotes
    are RFC 4180's only (a title 'Intro' keeps its apostrophes), and a page without a source is counted
    in the manifest."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    header = "doc_id,source,domain,crawled_at,title,body\n"
    body = "the same page text with enough words to make several shingles for the check"
    (docs / "a.csv").write_text(header + f"a,,d,2024-01-01,'Intro',{body}\nb,web,d,2024-01-02,t,'quoted' x\n")
    (docs / "B.CSV").write_text(header + f"c,web,e,2024-01-03,t,{body}\n")
    with gzip.open(docs / "sub" / "c.csv.gz", "wt") as handle:
        handle.write(header + "d,web,f,2024-01-04,t,another page\n")
    (docs / "_SUCCESS").write_text("")
    (docs / ".a.csv.crc").write_text("")
    _build(tmp_path, docs)
    con = duckdb.connect(str(tmp_path / "published" / "db.duckdb"), read_only=True)
    rows = con.sql("select doc_id, source, title, body from main_internal.stg_documents").fetchall()
    staged = {r[0]: r[1:] for r in rows}
    assert staged == {
        "a": (None, "'Intro'", body),
        "b": ("web", "t", "'quoted' x"),
        "c": ("web", "t", body),
        "d": ("web", "t", "another page"),
    }
    assert dict(
        duckdb.sql(f"select doc_id, cluster_id from '{tmp_path / 'out' / 'clusters.csv'}'").fetchall()
    ) == {
        "a": "cluster-a",
        "b": "cluster-b",
        "c": "cluster-a",
        "d": "cluster-d",
    }
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["source"]["documents_by_source"] == [
        {"source": "web", "documents": 3},
        {"source": None, "documents": 1},
    ]
    assert manifest["source"]["input_files"] == ["B.CSV", "a.csv", "c.csv.gz"]


def test_a_folder_holding_a_file_of_another_kind_is_refused_naming_it(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.csv").write_text("doc_id,source,domain,crawled_at,title,body\na,s,d,2024-01-01,t,x\n")
    (docs / "b.jsonl").write_text('{"doc_id": "b"}\n')
    result = run_dbt(
        ["run", "--select", "stg_documents"],
        db_path=tmp_path / "db.duckdb",
        check=False,
        dbt_vars={"documents_path": str(docs), "output_dir": str(tmp_path / "out")},
    )
    assert result.returncode != 0
    assert (
        f"documents_path '{docs}' (a folder) holds file(s) that are neither CSV nor Parquet: "
        f"{docs / 'b.jsonl'};" in result.stdout
    )


def _part_files(folder, count, odd=None):
    """``count`` Parquet files of one document each (doc_id p0000 on), in name order; ``odd``: {number: table}
    replacing some of them."""
    folder.mkdir()
    for number in range(count):
        table = pa.table(
            {
                "doc_id": [f"p{number:04d}"],
                "source": ["s"],
                "domain": ["d"],
                "crawled_at": ["2024-01-01"],
                "title": ["t"],
                "body": [f"page {number} of a crawl written as many part files"],
            }
        )
        pq.write_table((odd or {}).get(number, table), folder / f"part-{number:04d}.parquet")


def test_a_folder_of_many_part_files_is_read_whole_and_a_bad_file_anywhere_is_named(tmp_path):
    """Files are checked in batches (one query per 500 files): every row of 1,100 files is staged, and a
    file far into the folder without a required column, or with two columns of one name, is named."""
    good = tmp_path / "good"
    _part_files(good, 1100)
    _build(tmp_path, good)
    with duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True) as con:
        staged = con.sql(
            "select count(*), min(doc_id), max(doc_id) from main_internal.stg_documents"
        ).fetchall()
    assert staged == [(1100, "p0000", "p1099")]
    missing = tmp_path / "missing"
    _part_files(
        missing, 1100, {1042: pa.table({"doc_id": ["x"], "crawled_at": ["2024-01-01"], "body": ["x"]})}
    )
    result = _build(tmp_path, missing, check=False)
    assert f"file '{missing / 'part-1042.parquet'}' is missing required column(s): source, domain, title" in (
        result.stdout
    )
    repeated = tmp_path / "repeated"
    twice = pa.Table.from_arrays(
        [pa.array(["y"])] * 7, ["doc_id", "source", "domain", "crawled_at", "title", "body", "body"]
    )
    _part_files(repeated, 1100, {777: twice})
    result = _build(tmp_path, repeated, check=False)
    assert f"file '{repeated / 'part-0777.parquet'}' has two or more columns named 'body'" in result.stdout


def test_an_incremental_build_checks_only_the_files_it_has_not_staged(tmp_path):
    """A file staged by an earlier build, unchanged (same path, size and modification time), is not checked
    again; a new bad file, and a staged file rewritten bad in place, still stop the build, named."""
    folder = tmp_path / "crawl"
    _part_files(folder, 30)
    _build(tmp_path, folder)
    pq.write_table(
        pa.table({"doc_id": ["x"], "crawled_at": ["2024-01-01"], "body": ["x"]}), folder / "part-0030.parquet"
    )
    result = _build(tmp_path, folder, check=False)
    assert result.returncode != 0
    assert "stg_documents: checks 1 of 31 input file(s)" in result.stdout
    assert f"file '{folder / 'part-0030.parquet'}' is missing required column(s): source, domain, title" in (
        result.stdout
    )
    (folder / "part-0030.parquet").unlink()
    twice = pa.Table.from_arrays(
        [pa.array(["y"])] * 7, ["doc_id", "source", "domain", "crawled_at", "title", "body", "body"]
    )
    pq.write_table(twice, folder / "part-0012.parquet")
    result = _build(tmp_path, folder, check=False)
    assert "stg_documents: checks 1 of 30 input file(s)" in result.stdout
    assert f"file '{folder / 'part-0012.parquet'}' has two or more columns named 'body'" in result.stdout
    _part_files(tmp_path / "next", 31)
    for number in (12, 30):
        (tmp_path / "next" / f"part-{number:04d}.parquet").replace(folder / f"part-{number:04d}.parquet")
    result = _build(tmp_path, folder)
    assert "stg_documents: checks 2 of 31 input file(s)" in result.stdout
    with duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True) as con:
        staged = con.sql(
            "select count(*), min(doc_id), max(doc_id) from main_internal.stg_documents"
        ).fetchall()
    assert staged == [(31, "p0000", "p0030")]
