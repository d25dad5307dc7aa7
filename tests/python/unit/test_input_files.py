"""webdedup/inputs/input_files.py: which files documents_path names (nothing skipped silently), and what
DuckDB would read wrongly in one of them (an empty CSV, repeated column names, rows that do not split like
the header)."""

import gzip
import hashlib
import json
import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from webdedup.inputs.input_files import (
    csv_problem,
    documents_files_json,
    list_documents_files,
    parquet_problem,
)
from webdedup.outputs.manifest import build_manifest, input_file_rows

HEADER = "doc_id,source,domain,crawled_at,title,body\n"


def _touch(path, text=HEADER):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_a_folder_reads_every_csv_kind_in_any_case_and_skips_spark_markers(tmp_path):
    expected = [
        _touch(tmp_path / "B.CSV"),
        _touch(tmp_path / "a.csv"),
        _touch(tmp_path / "sub" / "c.tsv"),
    ]
    with gzip.open(tmp_path / "d.Csv.Gz", "wt") as handle:
        handle.write(HEADER)
    expected.append(str(tmp_path / "d.Csv.Gz"))
    _touch(tmp_path / "_SUCCESS", "")
    _touch(tmp_path / ".part-0.csv.crc", "")
    _touch(tmp_path / "_temporary" / "0" / "part-0.csv")
    assert list_documents_files(str(tmp_path)) == {"kind": "csv", "files": sorted(expected)}
    # the SQL function adds each file's key: its absolute path, size and modification time
    keys = [f"file {p} size={os.stat(p).st_size} mtime_ns={os.stat(p).st_mtime_ns}" for p in sorted(expected)]
    listed = {"kind": "csv", "files": sorted(expected), "file_keys": keys}
    assert json.loads(documents_files_json(str(tmp_path))) == listed


def test_a_folder_reads_parquet_and_pq(tmp_path):
    files = [_touch(tmp_path / "a.parquet", ""), _touch(tmp_path / "x" / "b.PQ", "")]
    assert list_documents_files(str(tmp_path)) == {"kind": "parquet", "files": sorted(files)}


def test_files_of_another_kind_in_a_folder_are_named_not_skipped(tmp_path):
    _touch(tmp_path / "a.csv")
    _touch(tmp_path / "notes.md", "")
    _touch(tmp_path / "b.jsonl", "")
    problem = list_documents_files(str(tmp_path))["problem"]
    assert problem == (
        f"documents_path '{tmp_path}' (a folder) holds file(s) that are neither CSV nor Parquet: "
        f"{tmp_path / 'b.jsonl'}, {tmp_path / 'notes.md'}; name the files to read with a glob such as "
        "'*.parquet'"
    )


def test_a_folder_mixing_kinds_or_holding_none_is_refused(tmp_path):
    _touch(tmp_path / "mixed" / "a.csv")
    _touch(tmp_path / "mixed" / "b.parquet", "")
    assert list_documents_files(str(tmp_path / "mixed"))["problem"].startswith(
        f"documents_path '{tmp_path / 'mixed'}' holds both Parquet (1) and CSV (1) files"
    )
    (tmp_path / "empty").mkdir()
    assert list_documents_files(str(tmp_path / "empty")) == {
        "problem": f"documents_path '{tmp_path / 'empty'}' (a folder) holds no CSV or Parquet files"
    }


def test_a_glob_expands_the_folders_it_matches_and_a_glob_matching_nothing_is_named(tmp_path):
    files = [_touch(tmp_path / "a.csv"), _touch(tmp_path / "old.csv" / "part-0.csv")]
    _touch(tmp_path / "old.csv" / "_SUCCESS", "")
    assert list_documents_files(str(tmp_path / "*.csv")) == {"kind": "csv", "files": sorted(files)}
    assert list_documents_files(str(tmp_path / "*.parquet")) == {
        "problem": f"documents_path '{tmp_path / '*.parquet'}': no files match the glob"
    }


def test_a_single_file_of_another_kind_or_a_missing_path_is_refused(tmp_path):
    _touch(tmp_path / "docs.json", "")
    assert (
        "is not a CSV (.csv, .csv.gz, .tsv) or Parquet (.parquet, .pq) file"
        in (list_documents_files(str(tmp_path / "docs.json"))["problem"])
    )
    assert list_documents_files(str(tmp_path / "nope.csv")) == {
        "problem": f"documents_path '{tmp_path / 'nope.csv'}': no such file or folder"
    }


def test_csv_problems(tmp_path):
    assert csv_problem(_touch(tmp_path / "empty.csv", ""), 1) == "is empty: it has no header row"
    assert csv_problem(_touch(tmp_path / "ok.csv", HEADER + "a,s,d,2024-01-01,t,x\n"), 6) == ""
    repeated = _touch(tmp_path / "rep.csv", "doc_id,body,title,body\n")
    assert csv_problem(repeated, 4) == "has two or more columns named 'body': rename or drop them"
    # DuckDB read fewer columns than the header has: the first row that does not split like it is named
    ragged = _touch(tmp_path / "ragged.csv", HEADER + 'a,s,d,2024-01-01,t,"x\ny"\nb,s,d,2024-01-01,t,x, y\n')
    assert csv_problem(ragged, 1) == (
        "row 2 (line 4) has 7 field(s) where the header has 6, split at ',' (a field holding the delimiter, "
        "a quote or a newline must be in \", a quote inside doubled): 'b,s,d,2024-01-01,t,x, y'"
    )
    tsv = _touch(tmp_path / "t.tsv", HEADER.replace(",", "\t") + 'a\ts\td\t2024-01-01\t"t\n')
    assert csv_problem(tsv, 6) == ""  # a raw quote in a TSV is text
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbfdoc_id,doc_id\n")
    assert csv_problem(str(bom), 2) == "has two or more columns named 'doc_id': rename or drop them"


def test_parquet_with_repeated_column_names_is_a_problem(tmp_path):
    table = pa.Table.from_arrays(
        [pa.array(["a"]), pa.array(["x"]), pa.array(["y"])], ["doc_id", "body", "body"]
    )
    pq.write_table(table, tmp_path / "rep.parquet")
    assert (
        parquet_problem(str(tmp_path / "rep.parquet"))
        == "has two or more columns named 'body': rename or drop them"
    )
    pq.write_table(pa.table({"doc_id": ["a"], "body": ["x"]}), tmp_path / "ok.parquet")
    assert parquet_problem(str(tmp_path / "ok.parquet")) == ""


def test_the_manifest_counts_documents_without_a_source(tmp_path):
    manifest = build_manifest(
        settings_row={
            "documents_path": "",
            "warc_paths": "",
            "warc_ranges_path": "",
            "staging_dir": str(tmp_path),
        },
        summary={},
        source_counts={"web": 2, None: 1, "archive": 3},
        outputs=[],
        input_rows=[],
        engine="duckdb",
        fingerprints="f",
    )
    assert manifest["source"]["documents_by_source"] == [
        {"source": "archive", "documents": 3},
        {"source": "web", "documents": 2},
        {"source": None, "documents": 1},
    ]


def test_the_input_files_are_listed_in_path_order_with_their_sha256(tmp_path):
    # two folders holding the same file name: names repeat, the order is the paths'
    files = [
        _touch(tmp_path / "b" / "part.csv", HEADER + "1,s,d,2024-01-01,t,x\n"),
        _touch(tmp_path / "a" / "part.csv"),
    ]
    _touch(tmp_path / "a" / "z.csv", HEADER + "2,s,d,2024-01-01,t,y\n")
    rows = input_file_rows({"documents_path": str(tmp_path / "*" / "*.csv")})
    paths = sorted([*files, str(tmp_path / "a" / "z.csv")])
    assert rows == [
        {
            "input_order": order,
            "input_file": path.rsplit("/", 1)[1],
            "bytes": len(Path(path).read_bytes()),
            "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
            "file_key": f"file {path} size={os.stat(path).st_size} mtime_ns={os.stat(path).st_mtime_ns}",
        }
        for order, path in enumerate(paths)
    ]
    # the manifest's digest: sha256 over name, NUL and each file's sha256, in that order
    expected = hashlib.sha256(
        b"".join(f"{r['input_file']}\0{r['sha256']}".encode() for r in rows)
    ).hexdigest()
    manifest = build_manifest(
        settings_row={"documents_path": "x", "staging_dir": str(tmp_path)},
        summary={},
        source_counts={},
        outputs=[],
        input_rows=rows,
        engine="duckdb",
        fingerprints="f",
    )
    assert manifest["source"]["input_files"] == ["part.csv", "z.csv", "part.csv"]
    assert manifest["source"]["input_sha256"] == expected


def test_a_file_with_the_file_key_of_an_earlier_build_is_not_hashed_again(tmp_path):
    path = _touch(tmp_path / "crawl" / "batch.csv", HEADER + "1,s,d,2024-01-01,t,x\n")
    settings = {"documents_path": str(tmp_path / "crawl")}
    (first,) = input_file_rows(settings)
    # the earlier build's sha256 is taken as it is (here one no file has, so it shows)
    (again,) = input_file_rows(settings, {first["file_key"]: "sha256 of the earlier build"})
    assert again == first | {"sha256": "sha256 of the earlier build"}
    # a new modification time is a new key: the file is hashed again
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    (touched,) = input_file_rows(settings, {first["file_key"]: "sha256 of the earlier build"})
    assert touched["sha256"] == first["sha256"]
    assert touched["file_key"] == f"file {path} size={first['bytes']} mtime_ns=1700000000000000000"


def test_column_names_duckdb_folds_together_are_a_problem_in_both_kinds(tmp_path):
    """DuckDB reads 'BODY' beside 'body' as a second column named BODY_1 (checked below), so which one is
    the body would depend on their order; it folds ASCII case only ('É' and 'é' stay two columns)."""
    table = pa.table({"doc_id": ["a"], "BODY": ["x"], "body": ["y"], "É": [1], "é": [2]})
    pq.write_table(table, tmp_path / "case.parquet")
    read = duckdb.sql(f"select * from '{tmp_path / 'case.parquet'}'").columns
    assert read == ["doc_id", "BODY", "body_1", "É", "é"]
    problem = (
        "has two or more columns named 'BODY' and 'body' (DuckDB reads column names whatever their case)"
    )
    assert parquet_problem(str(tmp_path / "case.parquet")) == problem + ": rename or drop them"
    csv_file = _touch(tmp_path / "case.csv", "doc_id,Body,title,body,TITLE,Title\n")
    assert csv_problem(csv_file, 6) == (
        "has two or more columns named 'Body' and 'body', 'title' and 'TITLE' and 'Title' "
        "(DuckDB reads column names whatever their case): rename or drop them"
    )
    pq.write_table(pa.table({"doc_id": ["a"], "body": ["x"], "É": [1], "é": [2]}), tmp_path / "ok.parquet")
    assert parquet_problem(str(tmp_path / "ok.parquet")) == ""
