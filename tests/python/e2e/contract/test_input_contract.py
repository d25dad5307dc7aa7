"""The input contract (issue 14): crawled_at in UTC, binary text decoded as UTF-8, reserved column names,
accepted types, CSV rows larger than DuckDB's default line size.  Each successful build keeps every
document: input rows = rows of clusters.csv."""

import csv
import datetime as dt
import io

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt
from tests.python.helpers.project import models_off_on
from webdedup.core import reference as ref

pytestmark = pytest.mark.dbt

HEADER = "doc_id,source,domain,crawled_at,title,body\n"
REQUIRED = ["doc_id", "source", "domain", "crawled_at", "title", "body"]


def _build(tmp_path, documents_path, check=True, **extra_vars):
    dbt_vars = {"documents_path": str(documents_path), "output_dir": str(tmp_path / "out"), **extra_vars}
    return run_dbt(["build"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars, check=check)


def _fails_with(result, message):
    assert result.returncode != 0
    assert message in result.stdout, result.stdout[-3000:]
    assert "Traceback" not in result.stdout


def _staged(tmp_path, columns="doc_id, crawled_at, title, body"):
    con = duckdb.connect(str(tmp_path / "published" / "db.duckdb"), read_only=True)
    try:
        return con.sql(f"select {columns} from main_internal.stg_documents order by doc_id").fetchall()
    finally:
        con.close()


def _clusters(tmp_path):
    return dict(
        duckdb.sql(f"select doc_id, cluster_id from '{tmp_path / 'out' / 'clusters.csv'}'").fetchall()
    )


def _assert_no_document_lost(tmp_path, input_ids):
    clusters = _clusters(tmp_path)
    assert len(clusters) == len(input_ids)
    assert set(clusters) == set(input_ids)


def test_crawled_at_with_offsets_and_zones_is_converted_to_utc_and_naive_is_utc(tmp_path, monkeypatch):
    # the machine's zone must not matter: naive values are UTC even when TZ says New York
    monkeypatch.setenv("TZ", "America/New_York")
    path = tmp_path / "docs.csv"
    rows = {
        "plus2": "2024-01-05T08:30:00+02:00",
        "zulu": "2024-01-05T06:30:00Z",
        "minus5": "2024-01-05 08:30:00-05:00",
        "named": "2024-07-05 08:30:00 America/New_York",  # EDT, UTC-4
        "compact": "2024-01-05T08:30:00.250+0530",
        "naive": "2024-01-05 08:30:00",
        "date": "2024-01-05",
    }
    path.write_text(HEADER + "".join(f"{k},s,d,{v},t,body of {k}\n" for k, v in rows.items()))
    _build(tmp_path, path)
    got = dict(_staged(tmp_path, "doc_id, crawled_at"))
    assert got == {
        "plus2": dt.datetime(2024, 1, 5, 6, 30),
        "zulu": dt.datetime(2024, 1, 5, 6, 30),
        "minus5": dt.datetime(2024, 1, 5, 13, 30),
        "named": dt.datetime(2024, 7, 5, 12, 30),
        "compact": dt.datetime(2024, 1, 5, 3, 0, 0, 250000),
        "naive": dt.datetime(2024, 1, 5, 8, 30),
        "date": dt.datetime(2024, 1, 5, 0, 0),
    }
    _assert_no_document_lost(tmp_path, rows)


def test_the_newest_crawl_in_utc_picks_the_representative(tmp_path):
    """Two identical pages: 'late' is crawled at 08:30+02:00 = 06:30 UTC, 'early' at 07:00Z.  Read
    without the offset, 'late' (08:30) would look newer and represent the cluster; in UTC 'early' is newer."""
    path = tmp_path / "docs.csv"
    body = "the same page text with enough words to make several shingles for the check"
    path.write_text(
        HEADER + f"late,s,a,2024-01-05T08:30:00+02:00,t,{body}\nearly,s,b,2024-01-05T07:00:00Z,t,{body}\n"
    )
    _build(tmp_path, path)
    kept = duckdb.sql(f"select doc_id from '{tmp_path / 'out' / 'deduped_documents.parquet'}'").fetchall()
    assert kept == [("early",)]
    # the cluster is named after its first crawl: 'late' (06:30 UTC)
    assert _clusters(tmp_path) == {"late": "cluster-late", "early": "cluster-late"}


def test_parquet_timestamptz_is_converted_and_binary_text_is_decoded(tmp_path):
    plus2 = dt.timezone(dt.timedelta(hours=2))
    table = pa.table(
        {
            "doc_id": ["a", "b"],
            "source": pa.array([b"s", b"s"], pa.binary()),
            "domain": ["d", "e"],
            "crawled_at": pa.array(
                [dt.datetime(2024, 1, 5, 8, 30, tzinfo=plus2), dt.datetime(2024, 1, 5, 6, 30, tzinfo=dt.UTC)],
                pa.timestamp("us", tz="Europe/Berlin"),
            ),
            "title": pa.array(["tïtle".encode(), b"t"], pa.binary()),
            "body": pa.array([b"line one\nline two", "café crème".encode()], pa.binary()),
        }
    )
    pq.write_table(table, tmp_path / "docs.parquet")
    _build(tmp_path, tmp_path / "docs.parquet")
    assert _staged(tmp_path, "doc_id, source, crawled_at, title, body") == [
        ("a", "s", dt.datetime(2024, 1, 5, 6, 30), "tïtle", "line one\nline two"),
        ("b", "s", dt.datetime(2024, 1, 5, 6, 30), "t", "café crème"),
    ]
    _assert_no_document_lost(tmp_path, ["a", "b"])


INVALID_ROWS = [
    ("a", b"t", b"plain words only here"),
    ("b", b"t\xff", b"caf\xe9 au lait with some more words"),
    ("c", b"t", b"\xfe\xfe broken start of the page"),
]


def _invalid_parquet(path):
    pq.write_table(
        pa.table(
            {
                "doc_id": [r[0] for r in INVALID_ROWS],
                "source": ["s"] * 3,
                "domain": ["d1", "d2", "d3"],
                "crawled_at": ["2024-01-01"] * 3,
                "title": pa.array([r[1] for r in INVALID_ROWS], pa.binary()),
                "body": pa.array([r[2] for r in INVALID_ROWS], pa.binary()),
            }
        ),
        path,
    )


def _invalid_csv(path):
    path.write_bytes(
        HEADER.encode()
        + b"".join(
            b"%s,s,d%d,2024-01-01,%s,%s\n" % (r[0].encode(), i + 1, r[1], r[2])
            for i, r in enumerate(INVALID_ROWS)
        )
    )


def test_binary_text_that_is_not_utf8_stops_the_build_naming_the_doc_ids(tmp_path):
    _invalid_parquet(tmp_path / "docs.parquet")
    _fails_with(
        _build(tmp_path, tmp_path / "docs.parquet", check=False),
        "bytes that are not UTF-8 (in title or body) in 2 row(s), doc_id: b, c (convert them to UTF-8,"
        " or set var invalid_utf8: replace to read them as U+FFFD)",
    )
    assert not (tmp_path / "out" / "clusters.csv").exists()


def test_a_csv_file_that_is_not_utf8_stops_the_build_naming_the_doc_ids(tmp_path):
    path = tmp_path / "docs.csv"
    _invalid_csv(path)
    _fails_with(
        _build(tmp_path, path, check=False),
        f"documents_path '{path}' holds bytes that are not UTF-8 in 2 row(s), doc_id: b, c; convert the file"
        " to UTF-8, or set var invalid_utf8: replace to read them as U+FFFD",
    )


def test_invalid_utf8_replace_gives_the_same_documents_from_parquet_and_csv(tmp_path):
    expected = [(d, t.decode("utf-8", "replace"), b.decode("utf-8", "replace")) for d, t, b in INVALID_ROWS]
    assert "\ufffd" in expected[1][1] and expected[2][2].startswith("\ufffd\ufffd ")
    results = {}
    for kind in ("parquet", "csv"):
        work = tmp_path / kind
        work.mkdir()
        path = work / f"docs.{kind}"
        (_invalid_parquet if kind == "parquet" else _invalid_csv)(path)
        _build(work, path, invalid_utf8="replace")
        assert _staged(work, "doc_id, title, body") == expected
        _assert_no_document_lost(work, [r[0] for r in INVALID_ROWS])
        results[kind] = (work / "out" / "clusters.csv").read_bytes()
    assert results["parquet"] == results["csv"]
    assert not [p for p in (tmp_path / "csv").rglob("*.tmp")]


def test_a_bad_invalid_utf8_value_is_refused(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text(HEADER + "a,s,d,2024-01-01,t,x\n")
    _fails_with(
        _build(tmp_path, path, check=False, invalid_utf8="ignore"),
        "var 'invalid_utf8' must be error or replace, got 'ignore'",
    )


def _reserved_from_yaml():
    """Every column declared on the models of a default build downstream of stg_documents (independently
    of the macro: the YAML files and each model's refs), minus the required input columns."""
    models = {}
    for path in (PROJECT_ROOT / "models").rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
            models[model["name"]] = [c["name"].lower() for c in model.get("columns", [])]
    refs = {}
    off = models_off_on("duckdb")  # the shingle-set tables only Spark stores
    for path in (PROJECT_ROOT / "models").rglob("*"):
        if path.suffix in (".sql", ".py"):
            text = path.read_text()
            if "config(enabled=" in text or path.stem in off:  # off in a default DuckDB build
                continue
            refs[path.stem] = {
                name for name in models if f'ref("{name}")' in text or f"ref('{name}')" in text
            }
    downstream = {"stg_documents"}
    changed = True
    while changed:
        changed = False
        for name, used in refs.items():
            if name not in downstream and used & downstream and name in models:
                downstream.add(name)
                changed = True
    return sorted({c for name in downstream for c in models[name]} - set(REQUIRED))


def test_the_reserved_names_are_every_column_the_project_adds_downstream(tmp_path):
    reserved = _reserved_from_yaml()
    for name in [
        "cluster_id",
        "cluster_size",
        "is_representative",
        "jaccard_to_representative",
        "representative_doc_id",
        "jaccard",
        "body_hash",
        "token_count",
    ]:
        assert name in reserved
    result = run_dbt(["run-operation", "show_input_contract"], db_path=tmp_path / "db.duckdb")
    assert f"reserved: {', '.join(reserved)}" in result.stdout
    assert "required: doc_id (text, integer)" in result.stdout
    assert "required: crawled_at (text, date, timestamp, timestamp_tz)" in result.stdout


@pytest.mark.parametrize(
    "extra",
    [
        ["cluster_size", "is_representative", "jaccard_to_representative"],
        ["Cluster_ID", "jaccard", "representative_doc_id", "body_hash"],
    ],
)
def test_input_columns_named_like_output_columns_are_refused(tmp_path, extra):
    path = tmp_path / "docs.csv"
    path.write_text(
        ",".join([*REQUIRED, "url", *extra])
        + "\n"
        + ",".join(["a", "s", "d", "2024-01-01", "t", "x", "u"] + ["1"] * len(extra))
        + "\n"
    )
    _fails_with(
        _build(tmp_path, path, check=False),
        f"documents_path '{path}' has column(s) named like a column this project adds to its outputs: "
        f"{', '.join(extra)}; rename or drop them in the input",
    )
    assert not (tmp_path / "out" / "clusters.csv").exists()


def test_every_reserved_name_is_refused_and_named(tmp_path):
    reserved = _reserved_from_yaml()
    table = pa.table(
        {
            **{c: ["a" if c == "doc_id" else "2024-01-01" if c == "crawled_at" else "x"] for c in REQUIRED},
            **{c: [1] for c in reserved},
        }
    )
    pq.write_table(table, tmp_path / "docs.parquet")
    _fails_with(
        _build(tmp_path, tmp_path / "docs.parquet", check=False),
        f"has column(s) named like a column this project adds to its outputs: {', '.join(reserved)};",
    )


def test_required_columns_of_a_type_the_contract_does_not_accept_are_refused(tmp_path):
    pq.write_table(
        pa.table(
            {
                "doc_id": ["a"],
                "source": ["s"],
                "domain": ["d"],
                "crawled_at": pa.array([1704067200], pa.int64()),
                "title": ["t"],
                "body": pa.array([1.5]),
            }
        ),
        tmp_path / "docs.parquet",
    )
    _fails_with(
        _build(tmp_path, tmp_path / "docs.parquet", check=False),
        f"documents_path '{tmp_path / 'docs.parquet'}' has column(s) of a type the input contract does not"
        " accept: crawled_at is BIGINT (accepted: text, date, timestamp, timestamp_tz); body is DOUBLE"
        " (accepted: text, binary); convert them in the file or with a query first",
    )


def test_a_csv_row_of_20_mb_is_read(tmp_path):
    big = " ".join(f"w{i}" for i in range(3_000_000))[:20_000_000].rsplit(" ", 1)[0]
    big2 = big + "\nand a second line"
    assert len(big) > 19_999_000
    path = tmp_path / "docs.csv"
    with open(path, "w") as handle:
        handle.write(HEADER)
        handle.write(f'big,s,a,2024-01-01,t,"{big}"\n')
        handle.write(f'big2,s,b,2024-01-02,t,"{big2}"\n')
        handle.write("small,s,c,2024-01-01,t,a short page\n")
    _build(tmp_path, path)
    lengths = dict(_staged(tmp_path, "doc_id, length(body)"))
    assert lengths == {"big": len(big), "big2": len(big2), "small": 12}
    tokens = dict(
        duckdb.sql(
            f"select doc_id, token_count from '{tmp_path / 'out' / 'fingerprinted.parquet'}'"
        ).fetchall()
    )
    assert tokens["big"] == len(ref.normalize_text(big).split())
    shingles = [ref.token_shingles(ref.normalize_text(b).split()) for b in (big, big2)]
    assert ref.jaccard(*shingles) >= 0.7  # so big and big2 are one cluster, named after the first crawl
    assert _clusters(tmp_path) == {"big": "cluster-big", "big2": "cluster-big", "small": "cluster-small"}


def test_extra_columns_of_any_name_are_carried_unchanged(tmp_path):
    extra = ["url", "it's", "Ünïcode col", "with,comma", "with space"]
    table = pa.table(
        {
            "doc_id": ["a", "b"],
            "source": ["s", "s"],
            "domain": ["d", "e"],
            "crawled_at": ["2024-01-01", "2024-01-02"],
            "title": ["t", "t"],
            "body": ["first page words here", "second page other words"],
            **{name: [f"{name}-a", f"{name}-b"] for name in extra},
        }
    )
    pq.write_table(table, tmp_path / "docs.parquet")
    _build(tmp_path, tmp_path / "docs.parquet")
    kept = pq.read_table(tmp_path / "out" / "deduped_documents.parquet")
    assert kept.column_names == [*REQUIRED, *extra, "cluster_id", "cluster_size"]
    assert kept.sort_by("doc_id").select(extra).to_pylist() == table.select(extra).to_pylist()
    _assert_no_document_lost(tmp_path, ["a", "b"])


def test_extra_columns_of_any_type_keep_their_types_and_values(tmp_path):
    """The release carries extra input columns of types pyarrow's writer does not keep (an INTERVAL, a
    TIME WITH TIME ZONE, a UUID) beside ordinary ones: each comes back as DuckDB reads it from the input."""
    extra = {
        "flag": "i = 1",
        "wait": "to_days(i)",
        "opens": "'12:34:56+02'::timetz",
        "ref": "('12345678-1234-5678-1234-56781234567' || i)::uuid",
        "tags": "['x', 'y']",
    }
    columns = ", ".join(f"{expression} as {name}" for name, expression in extra.items())
    duckdb.execute(
        f"copy (select 'doc' || i as doc_id, 's' as source, 'd' as domain, date '2024-01-01' as crawled_at,"
        f" 't' as title, 'page number ' || i || ' about ' || repeat('words ', i) as body, {columns}"
        f" from range(1, 3) as r(i)) to '{tmp_path / 'docs.parquet'}' (format parquet)"
    )
    _build(tmp_path, tmp_path / "docs.parquet")
    select = f"select doc_id, {', '.join(extra)} from '{{}}' order by doc_id"
    described = f"select column_name, column_type from (describe {select})"
    release, given = tmp_path / "out" / "deduped_documents.parquet", tmp_path / "docs.parquet"
    assert duckdb.sql(described.format(release)).fetchall() == duckdb.sql(described.format(given)).fetchall()
    assert duckdb.sql(select.format(release)).fetchall() == duckdb.sql(select.format(given)).fetchall()
    _assert_no_document_lost(tmp_path, ["doc1", "doc2"])


@pytest.mark.parametrize("chunk_bytes", [7, 64, 1 << 20])
def test_the_largest_csv_row_counts_quoted_newlines_and_spans_chunks(tmp_path, monkeypatch, chunk_bytes):
    """DuckDB's max_line_size comes from this scan: it must be the largest row as a CSV parser splits the
    file (Python's csv module, here), whatever the chunking."""
    from webdedup.inputs import csv_files as input_files

    monkeypatch.setattr(input_files, "CHUNK_BYTES", chunk_bytes)
    rows = [
        ["doc_id", "body"],
        ["a", "short"],
        ["b", 'a "quoted" body\nover\nthree lines, with commas'],
        ["c", "x" * 300],
        ["d", "caf\u00e9 \u2013 unicode"],
    ]
    path = tmp_path / "docs.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    expected = []
    for row in rows:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(row)
        expected.append(len(buffer.getvalue().encode()))
    assert input_files.largest_row_bytes(str(path)) == (max(expected), True)
    path.write_bytes(path.read_bytes() + b"e,caf\xe9\n")
    assert input_files.largest_row_bytes(str(path)) == (max(expected), False)


def test_a_column_name_with_a_double_quote_is_refused(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text(HEADER.strip() + ',"a ""quoted"" name"\na,s,d,2024-01-01,t,x,1\n')
    _fails_with(
        _build(tmp_path, path, check=False),
        f"documents_path '{path}' has column name(s) holding a quote character (\" or `), which dbt cannot"
        ' quote: a "quoted" name; rename them in the input',
    )


def _stage(tmp_path, documents_path, check=True):
    """dbt run of stg_documents alone: the input checks run there, before any other work."""
    dbt_vars = {"documents_path": str(documents_path), "output_dir": str(tmp_path / "out")}
    return run_dbt(
        ["run", "--select", "stg_documents"], db_path=tmp_path / "db.duckdb", dbt_vars=dbt_vars, check=check
    )


ROW = "a,s,d,2024-01-01,t,x\n"


@pytest.mark.parametrize(
    ("file_name", "text", "message"),
    [
        # DuckDB would read the second body as body_1 and the documents as empty
        (
            "dup.csv",
            HEADER.strip() + ",body\n" + ROW.strip() + ",y\n",
            "has two or more columns named 'body'",
        ),
        # DuckDB matches names whatever their ASCII case: BODY would be read as BODY_1
        (
            "case.csv",
            HEADER.strip() + ",BODY\n" + ROW.strip() + ",y\n",
            "has two or more columns named 'body' and 'BODY' (DuckDB reads column names whatever their case)",
        ),
        # DuckDB's sniffer would read each line as one column and report every column missing
        (
            "ragged.csv",
            HEADER + ROW + "b,s,d,2024-01-01,t\n",
            "row 2 (line 3) has 5 field(s) where the header has 6",
        ),
        # an input rowid would shadow DuckDB's, by which the release keeps the input's order
        ("rowid.csv", HEADER.strip() + ",rowid\n" + ROW.strip() + ",7\n", "reserves: rowid; rename or drop"),
        # DuckDB's cast reads these as dates
        (
            "special.csv",
            HEADER + "a,s,d,infinity,t,x\nb,s,d,epoch,t,y\nc,s,d,-infinity,t,z\nd,s,d,2024-01-01,t,w\n",
            "crawled_at is missing or not a date/timestamp in 3 row(s): a=infinity, b=epoch, c=-infinity",
        ),
        ("empty.csv", "", "is empty: it has no header row"),
    ],
    ids=[
        "repeated_column",
        "repeated_column_in_another_case",
        "ragged_row",
        "rowid_column",
        "special_dates",
        "empty_file",
    ],
)
def test_csv_files_that_duckdb_would_read_wrongly_are_refused_naming_the_problem(
    tmp_path, file_name, text, message
):
    path = tmp_path / file_name
    path.write_text(text)
    _fails_with(_stage(tmp_path, path, check=False), message)


def test_parquet_timestamps_in_nanoseconds_and_an_empty_pandas_batch_are_read(tmp_path):
    """A timestamp with zone in nanoseconds is converted to UTC like one in microseconds; an empty batch
    (pandas writes its columns as null) adds no rows and no error."""
    docs = tmp_path / "docs"
    docs.mkdir()
    berlin = dt.timezone(dt.timedelta(hours=1))
    stamps = [dt.datetime(2024, 1, 5, 8, 30, tzinfo=berlin), dt.datetime(2024, 1, 6, 9, 0, tzinfo=berlin)]
    columns = {c: ["a", "b"] if c == "doc_id" else ["x", "y"] for c in REQUIRED if c != "crawled_at"}
    pq.write_table(
        pa.table({**columns, "crawled_at": pa.array(stamps, pa.timestamp("ns", tz="Europe/Berlin"))}),
        docs / "batch-1.parquet",
    )
    pq.write_table(pa.table({c: pa.nulls(0) for c in REQUIRED}), docs / "batch-2.parquet")
    _stage(tmp_path, docs)
    con = duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True)
    assert con.sql(
        "select doc_id, crawled_at from main_internal.stg_documents order by doc_id"
    ).fetchall() == [
        ("a", dt.datetime(2024, 1, 5, 7, 30)),
        ("b", dt.datetime(2024, 1, 6, 8, 0)),
    ]
