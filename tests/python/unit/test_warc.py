"""webdedup/warc/ without dbt: statuses, lineage, titles and decoded text against what the test writer
wrote; local files and byte ranges (local, http with and without Range support) give the same rows; bad
settings are named; fuzzed files never crash the reader and every byte is accounted for."""

from __future__ import annotations

import codecs
import datetime as dt
import functools
import gzip
import http.server
import itertools
import os
import shutil
import threading
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.python.helpers.warc_fixtures import build_corpus, warc_record, write_ranges_csv
from webdedup.warc import ranges, reader, records, reuse, schema, sources
from webdedup.warc.extract import decode_html

KEY = ("warc_filename", "warc_record_offset", "warc_member_record")


def _sorted(rows):
    """Rows in key order, without read_key (it names where a row was read from: a file or a range)."""
    rows = [{k: v for k, v in row.items() if k != "read_key"} for row in rows]
    return sorted(rows, key=lambda r: tuple(r[k] for k in KEY))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warc") / "warcs"
    built = build_corpus(folder)
    write_ranges_csv(built, folder / "ranges.csv")
    rows = reader.read_warc_table(str(folder)).to_pylist()
    return built, rows


def test_every_written_span_is_one_row_with_the_expected_status(corpus):
    built, rows = corpus
    expected = sorted((w.filename, w.offset, w.length, w.kind) for w in built.written)
    got = sorted(
        (r["warc_filename"], r["warc_record_offset"], r["warc_record_length"], r["status"]) for r in rows
    )
    assert got == expected
    assert Counter(r["status"] for r in rows) == {
        "extracted": 8,
        "skipped_non_html": 1,
        "skipped_status": 1,
        "skipped_revisit": 1,
        "skipped_request": 1,
        "skipped_other_type": 2,
        "error": 3,
    }


def test_extracted_documents_carry_lineage_titles_and_decoded_text(corpus):
    built, rows = corpus
    by_place = {(r["warc_filename"], r["warc_record_offset"]): r for r in rows}
    for w in built.extracted():
        row = by_place[(w.filename, w.offset)]
        assert row["warc_record_length"] == w.length
        assert row["url"] == w.url
        assert row["domain"] == w.url.split("://")[1].split("/")[0].split(":")[0]
        assert row["warc_record_id"] == w.record_id
        assert row["doc_id"] == w.record_id[1:-1]  # the URN without angle brackets
        assert row["content_digest"] == w.content_digest
        assert row["http_status"] == 200
        assert row["title"] == w.title
        assert w.text in row["body"], (w.url, row["body"][:200])
        assert codecs.lookup(row["charset"]).name == codecs.lookup(w.charset).name
        assert row["source"] == "warc"
    # no navigation or script text in the main text
    news = by_place[("crawl-a.warc.gz", built.extracted()[0].offset)]
    assert "Weather" not in news["body"] and "analytics" not in news["body"]
    # WARC-Date with fractional seconds, as naive UTC
    russian = next(r for r in rows if r["domain"] == "ru.example")
    assert russian["crawled_at"] == dt.datetime(2024, 3, 1, 10, 1, 0, 123456)
    assert "Новая станция метро «Набережная» открылась" in russian["body"]


def test_skipped_records_say_why(corpus):
    _, rows = corpus
    details = {r["status"]: r["detail"] for r in rows if r["status"] not in ("extracted", "error")}
    assert details["skipped_status"] == "http status 404"
    assert details["skipped_non_html"] == "content type application/pdf"
    assert all(r["doc_id"] is None and r["body"] is None for r in rows if r["status"] != "extracted")


def test_errors_name_file_offset_and_problem(corpus):
    built, rows = corpus
    errors = [
        (r["warc_filename"], r["warc_record_offset"], r["detail"]) for r in rows if r["status"] == "error"
    ]
    places = [(w.filename, w.offset) for w in built.written if w.kind == "error"]
    assert [e[:2] for e in errors] == places
    assert "corrupt gzip member" in errors[0][2]
    assert errors[1][2].startswith("truncated record: Content-Length")
    assert errors[2][2] == "truncated gzip member (unexpected end of file)"


def test_byte_ranges_give_the_same_rows_as_the_files(corpus):
    built, rows = corpus
    folder = built.folder
    ranged = reader.read_warc_table("", str(folder / "ranges.csv")).to_pylist()
    listed = {(w.filename, w.offset) for w in built.written if w.in_range_table}
    assert _sorted(ranged) == _sorted(
        [r for r in rows if (r["warc_filename"], r["warc_record_offset"]) in listed]
    )


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with single-range support (206), like a CDN or S3."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        spec = self.headers.get("Range")
        if spec:
            start, end = (int(x) for x in spec.removeprefix("bytes=").split("-"))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            data = data[start : end + 1]
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Python's own file server: ignores Range and sends the whole file (200)."""

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("handler", [_RangeHandler, _QuietHandler])
def test_http_byte_ranges_give_the_same_rows(corpus, handler):
    built, _ = corpus
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(built.folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        ranged = reader.read_warc_table("", str(built.folder / "ranges.csv"), base).to_pylist()
        first = built.extracted()[0]
        assert (
            sources.read_range(base + first.filename, first.offset, first.length)
            == ((built.folder / first.filename).read_bytes()[first.offset : first.offset + first.length])
        )
        with pytest.raises(OSError, match="HTTP 404"):
            sources.read_range(base + "no-such.warc.gz", 0, 10, retries=0)
    finally:
        server.shutdown()
        server.server_close()
    local = reader.read_warc_table("", str(built.folder / "ranges.csv")).to_pylist()
    assert _sorted(ranged) == _sorted(local)


def test_s3_and_relative_locations():
    assert sources.http_url("s3://commoncrawl/crawl-data/CC-MAIN-2024-10/x.warc.gz") == (
        "https://commoncrawl.s3.amazonaws.com/crawl-data/CC-MAIN-2024-10/x.warc.gz"
    )
    assert sources.resolve_location("crawl-data/a.warc.gz", "https://data.commoncrawl.org/") == (
        "https://data.commoncrawl.org/crawl-data/a.warc.gz"
    )
    assert sources.resolve_location("/abs/a.warc.gz", "https://x/") == "/abs/a.warc.gz"
    assert sources.resolve_location("s3://b/k", "/base") == "s3://b/k"
    assert sources.resolve_location("a.warc.gz", "/base") == "/base/a.warc.gz"


def test_unreadable_ranges_are_error_rows_and_do_not_stop_the_others(corpus, tmp_path):
    built, _ = corpus
    first = built.extracted()[0]
    table = tmp_path / "ranges.csv"
    table.write_text(
        "warc_filename,warc_record_offset,warc_record_length\n"
        f"missing.warc.gz,0,100\n"
        f"{first.filename},{first.offset},{first.length + 5000}\n"  # runs past the end: short read
        f"{first.filename},{first.offset + 1},{first.length}\n"  # not at a member start
        f"{first.filename},{first.offset},{first.length}\n"
    )
    got = reader.read_warc_table("", str(table), str(built.folder)).to_pylist()
    assert [r["status"] for r in got] == ["error", "error", "error", "extracted"]
    assert got[0]["warc_filename"] == "missing.warc.gz" and "FileNotFoundError" in got[0]["detail"]
    assert "short read" in got[1]["detail"]
    assert got[2]["warc_record_offset"] == first.offset + 1
    assert got[3]["title"] == first.title


def test_a_range_covering_two_members_reports_the_extra_bytes(corpus, tmp_path):
    built, _ = corpus
    a, b = [w for w in built.written if w.filename == "crawl-a.warc.gz"][2:4]
    table = tmp_path / "ranges.csv"
    table.write_text(f"filename,offset,length\ncrawl-a.warc.gz,{a.offset},{a.length + b.length}\n")
    got = reader.read_warc_table("", str(table), str(built.folder)).to_pylist()
    assert [r["status"] for r in got] == ["extracted", "error"]
    assert got[1]["detail"] == f"{b.length} byte(s) after the gzip member (a range must be one member)"


def test_bad_settings_are_named(tmp_path):
    with pytest.raises(
        schema.WarcInputError, match=f"warc_paths '{tmp_path / 'nope'}': no such file or folder"
    ):
        reader.read_warc_table(str(tmp_path / "nope"))
    with pytest.raises(schema.WarcInputError, match="matched no files"):
        reader.read_warc_table(str(tmp_path / "*.warc.gz"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(schema.WarcInputError, match=r"is a folder without \.warc or \.warc\.gz files"):
        reader.read_warc_table(str(tmp_path / "empty"))
    with pytest.raises(schema.WarcInputError, match=f"warc_ranges_path '{tmp_path / 'r.csv'}': no such file"):
        reader.read_warc_table("", str(tmp_path / "r.csv"))
    (tmp_path / "r.txt").write_text("x")
    with pytest.raises(schema.WarcInputError, match=r"is not a \.csv or \.parquet file"):
        reader.read_warc_table("", str(tmp_path / "r.txt"))
    bad = tmp_path / "ranges.csv"
    bad.write_text("url,warc_filename,warc_record_length\nhttp://x/,a.warc.gz,10\n")
    with pytest.raises(schema.WarcInputError) as info:
        reader.read_warc_table("", str(bad))
    assert str(info.value) == (
        f"warc_ranges_path '{bad}' is missing required column warc_record_offset or offset"
        " (found: url, warc_filename, warc_record_length)"
    )
    bad.write_text("filename,offset,length\na.warc.gz,0,10\na.warc.gz,ten,10\n")
    with pytest.raises(schema.WarcInputError, match=f"warc_ranges_path '{bad}' row 2: offset 'ten'"):
        reader.read_warc_table("", str(bad))


def test_a_file_and_a_glob_name_files_relative_to_their_folder(corpus):
    built, rows = corpus
    one = reader.read_warc_table(str(built.folder / "sub" / "crawl-b.warc.gz")).to_pylist()
    assert {r["warc_filename"] for r in one} == {"crawl-b.warc.gz"}
    globbed = reader.read_warc_table(str(built.folder / "**" / "*.warc.gz")).to_pylist()
    assert {r["warc_filename"] for r in globbed} == {"crawl-a.warc.gz", "sub/crawl-b.warc.gz"}
    assert len(globbed) == sum(1 for r in rows if r["warc_filename"].endswith(".gz"))


def test_a_whole_file_gzipped_as_one_member_gives_one_row_per_record(tmp_path):
    page = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>T%d</title><p>text %d</p>"
    records = b"".join(
        warc_record(
            "response",
            f"https://x.example/{i}",
            page % (i, i),
            "2024-01-01T00:00:00Z",
            {"Content-Type": "application/http; msgtype=response"},
        )
        for i in range(3)
    )
    path = tmp_path / "whole.warc.gz"
    path.write_bytes(gzip.compress(records))
    rows = reader.read_warc_table(str(path)).to_pylist()
    assert [(r["warc_record_offset"], r["warc_member_record"], r["title"]) for r in rows] == [
        (0, 0, "T0"),
        (0, 1, "T1"),
        (0, 2, "T2"),
    ]
    assert {r["warc_record_length"] for r in rows} == {path.stat().st_size}


# ------------------------------------------------------------------------------------------------ fuzzing


def _check_rows(rows, size, name):
    for r in rows:
        assert r["status"] in schema.STATUSES
        assert r["warc_filename"] == name
        assert (
            0 <= r["warc_record_offset"] <= size and r["warc_record_offset"] + r["warc_record_length"] <= size
        )
        if r["status"] == "error":
            assert r["detail"]
        assert (r["status"] == "extracted") == (r["doc_id"] is not None)


def _spans(rows):
    return sorted({(r["warc_record_offset"], r["warc_record_length"]) for r in rows})


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.binary(max_size=4000), gzipped=st.booleans())
def test_random_bytes_never_crash_and_every_byte_is_accounted_for(tmp_path_factory, data, gzipped):
    name = "random.warc.gz" if gzipped else "random.warc"
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(data)
    rows = list(reader.iter_file_rows(str(path), name))
    size = path.stat().st_size
    _check_rows(rows, size, name)
    if gzipped:
        # gzip framing tiles the file: member and error spans follow each other from 0 to the end
        spans = _spans(rows)
        assert not data or (spans[0][0] == 0 and sum(length for _, length in spans) == size)
        assert all(a + n == b for (a, n), (b, _) in itertools.pairwise(spans))


@pytest.fixture(scope="module")
def clean_file(corpus):
    built, rows = corpus
    name = "crawl-a.warc.gz"
    rows = [{**r, "read_key": None} for r in rows if r["warc_filename"] == name]
    return (built.folder / name).read_bytes(), rows  # iter_file_rows gives no read_key


@FUZZ
@given(
    position=st.floats(min_value=0, max_value=1, exclude_max=True),
    edit=st.sampled_from(["flip", "delete", "insert", "truncate"]),
    value=st.binary(min_size=1, max_size=40),
)
def test_a_mutated_member_is_reported_and_the_other_members_are_unchanged(
    tmp_path_factory, clean_file, position, edit, value
):
    data, clean_rows = clean_file
    at = int(position * len(data))
    if edit == "flip":
        mutated = data[:at] + bytes([data[at] ^ value[0] or 1]) + data[at + 1 :]
    elif edit == "delete":
        mutated = data[:at] + data[at + len(value) :]
    elif edit == "insert":
        mutated = data[:at] + value + data[at:]
    else:
        mutated = data[:at]
    path = tmp_path_factory.mktemp("mutated") / "crawl-a.warc.gz"
    path.write_bytes(mutated)
    rows = list(reader.iter_file_rows(str(path), "crawl-a.warc.gz")) if mutated else []
    _check_rows(rows, len(mutated), "crawl-a.warc.gz")
    spans = _spans(rows)
    if spans:
        assert spans[0][0] == 0 and sum(length for _, length in spans) == len(mutated)
    # members wholly before the edit are read exactly as before
    before = [r for r in clean_rows if r["warc_record_offset"] + r["warc_record_length"] <= at]
    assert [r for r in rows if r["warc_record_offset"] + r["warc_record_length"] <= at][
        : len(before)
    ] == before
    # members wholly after the edit are found again (shifted by the size change) and read the same
    shift = len(mutated) - len(data)
    after = [r for r in clean_rows if r["warc_record_offset"] > at + len(value)]
    if edit != "truncate":
        shifted = {(r["warc_record_offset"] - shift, r["warc_record_length"]): r for r in rows}
        for r in after:
            moved = shifted[(r["warc_record_offset"], r["warc_record_length"])]
            assert {**moved, "warc_record_offset": r["warc_record_offset"]} == r


@FUZZ
@given(
    position=st.floats(min_value=0, max_value=1, exclude_max=True), value=st.binary(min_size=1, max_size=40)
)
def test_mutated_uncompressed_records_never_crash(tmp_path_factory, corpus, position, value):
    built, _ = corpus
    data = (built.folder / "crawl-c.warc").read_bytes()
    at = int(position * len(data))
    mutated = data[:at] + value + data[at + len(value) :]
    path = tmp_path_factory.mktemp("plain") / "crawl-c.warc"
    path.write_bytes(mutated)
    _check_rows(list(reader.iter_file_rows(str(path), "crawl-c.warc")), len(mutated), "crawl-c.warc")


@FUZZ
@given(record=st.binary(max_size=2000))
def test_any_bytes_as_one_range_give_rows_not_exceptions(record):
    rows = records.rows_from_member(record, "r.warc.gz", 1234)
    assert rows
    _check_rows(rows, 1234 + len(record), "r.warc.gz")
    assert all(r["warc_record_offset"] == 1234 for r in rows)


class _MemoryStore(reuse.StoredRows):
    """Rows of an earlier read, kept in memory (the dbt model keeps them in its previous table)."""

    def __init__(self, table: pa.Table):
        self.table, self.keys = table, set(table.column("read_key").to_pylist())
        self.failed = {
            r["read_key"] for r in table.to_pylist() if (r["detail"] or "").startswith(schema.READ_FAILURE)
        }

    def batches(self, keys):
        return self.table.filter(pc.is_in(self.table.column("read_key"), pa.array(keys))).to_batches()


def _in_order(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: (r["read_key"], *(r[k] for k in KEY)))


def test_files_and_ranges_read_before_are_reused_and_changed_ones_read_again(corpus, tmp_path, monkeypatch):
    built, _ = corpus
    folder = tmp_path / "warcs"
    shutil.copytree(built.folder, folder)
    read_files, read_ranges = [], []
    read_file, read_range = reader.iter_file_batches, sources.read_range
    monkeypatch.setattr(
        reader,
        "iter_file_batches",
        lambda p, name, *rest: read_files.append(name) or read_file(p, name, *rest),
    )
    monkeypatch.setattr(ranges, "read_range", lambda *args: read_ranges.append(args[1]) or read_range(*args))

    first = reader.read_warc_table(str(folder))
    assert sorted(read_files) == ["crawl-a.warc.gz", "crawl-c.warc", "sub/crawl-b.warc.gz"]
    read_files.clear()
    again = reader.read_warc_batches(str(folder), stored=_MemoryStore(first)).read_all()
    assert read_files == []  # nothing is read again; the stored rows are passed on unchanged
    assert _in_order(again) == _in_order(first)

    # a file with a new modification time is read again (and keeps the rows it gave before)
    changed = folder / "sub" / "crawl-b.warc.gz"
    status = changed.stat()
    os.utime(changed, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
    again = reader.read_warc_batches(str(folder), stored=_MemoryStore(first)).read_all()
    assert read_files == ["sub/crawl-b.warc.gz"]
    assert _sorted(again.to_pylist()) == _sorted(first.to_pylist())
    assert len({key for key in again.column("read_key").to_pylist() if "crawl-b" in key}) == 1
    assert not set(again.column("read_key").to_pylist()) >= set(first.column("read_key").to_pylist())

    # byte ranges: the ranges read before are not fetched again; a row added to the table is
    ranges_csv = folder / "ranges.csv"
    lines = ranges_csv.read_text().splitlines(keepends=True)
    ranges_csv.write_text("".join(lines[:-1]))
    first = reader.read_warc_table("", str(ranges_csv))
    fetched = len(read_ranges)
    again = reader.read_warc_batches("", str(ranges_csv), stored=_MemoryStore(first)).read_all()
    assert len(read_ranges) == fetched and _in_order(again) == _in_order(first)
    ranges_csv.write_text("".join(lines))
    again = reader.read_warc_batches("", str(ranges_csv), stored=_MemoryStore(first)).read_all()
    assert len(read_ranges) == fetched + 1
    assert _sorted(again.to_pylist()) == _sorted(reader.read_warc_table("", str(ranges_csv)).to_pylist())


def test_worker_processes_give_the_same_rows_in_the_same_order(corpus, monkeypatch):
    built, rows = corpus
    monkeypatch.setattr(reader, "PARALLEL_MIN_BYTES", 0)  # any input goes to the workers
    monkeypatch.setattr(reader, "SPANS_PER_TASK", 2)  # many small tasks, several in flight
    assert reader.read_warc_batches(str(built.folder), workers=2).read_all().to_pylist() == rows


def test_a_range_that_could_not_be_read_is_read_again_next_time(corpus, tmp_path, monkeypatch):
    built, _ = corpus
    first = built.extracted()[0]
    table = tmp_path / "ranges.csv"
    table.write_text(f"filename,offset,length\n{first.filename},{first.offset},{first.length}\n")

    def unavailable(*args, **kwargs):
        raise OSError("HTTP 503 Service Unavailable")

    with monkeypatch.context() as patch:
        patch.setattr(ranges, "read_range", unavailable)
        failed = reader.read_warc_table("", str(table), str(built.folder))
    assert failed.column("detail").to_pylist() == ["cannot read range: OSError: HTTP 503 Service Unavailable"]
    # the same range (same key) next time: read again, not reused
    again = reader.read_warc_batches(
        "", str(table), str(built.folder), stored=_MemoryStore(failed)
    ).read_all()
    assert again.column("read_key").to_pylist() == failed.column("read_key").to_pylist()
    assert again.column("status").to_pylist() == ["extracted"]


def test_charsets_are_decoded_in_whatwg_order_and_the_charset_named_is_the_one_used():
    """A byte order mark wins over any declaration; <meta charset=utf-16> on an ASCII-readable page means
    UTF-8 (WHATWG); a declared charset the bytes do not decode with gives way to detection, and the
    charset returned is the one that decoded the text (Resiliparse fell back to cp1252 silently)."""
    words = "Привет мир это тестовая страница с русским текстом " * 20

    def page(meta):
        return (
            f'<html><head><meta charset="{meta}"><title>Тест</title></head><body><p>{words}</p></body></html>'
        )

    assert decode_html(b"\xef\xbb\xbf" + page("windows-1251").encode("utf-8"), "koi8-r") == (
        page("windows-1251"),
        "utf-8",
    )
    ascii_page = (
        f'<html><head><meta charset="utf-16"><title>Hello</title></head><p>{"ascii words " * 20} </p>'
    )

    assert decode_html(ascii_page.encode("ascii"), None) == (ascii_page, "utf-8")
    for http_charset in (None, "utf-8"):  # the meta or the HTTP header says UTF-8; the bytes are cp1251
        assert decode_html(page("utf-8").encode("cp1251"), http_charset) == (page("utf-8"), "cp1251")
    assert decode_html(page("windows-1251").encode("cp1251"), None) == (page("windows-1251"), "cp1251")
    truncated = page("utf-8").encode("utf-8") + b"\xd0"  # a character cut by the crawler's size limit
    assert decode_html(truncated, None) == (page("utf-8") + "\ufffd", "utf-8")


def test_files_of_a_warc_folder_that_are_not_warc_are_logged_not_read(tmp_path, capsys):
    for name in ["a.warc", "sub/b.WARC.GZ", "README.txt", "idx/x.cdx"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    units = reader.read_units(str(tmp_path))
    assert [unit.filename for unit in units] == ["a.warc", "sub/b.WARC.GZ"]
    assert (
        f"[warc] not read: 2 file(s) of warc_paths '{tmp_path}' that are not WARC: README.txt, idx/x.cdx"
        in capsys.readouterr().out
    )
