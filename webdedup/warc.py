"""WARC input: read records from local WARC files or pinned byte ranges and extract the main text of HTML.

Plain functions behind the ``stg_warc_records`` dbt Python model (a thin adapter), tested by pytest.

* Framing is done here, so that every byte of an input is accounted for: a ``.warc.gz`` file is split into
  its gzip members (one record each, the layout Common Crawl and the WARC standard recommend; the
  member's compressed offset and length are exactly the Common Crawl index's ``warc_record_offset`` and
  ``warc_record_length``), an uncompressed file into records by their ``Content-Length``.  Bytes that
  cannot be framed (a corrupt or truncated member, garbage) become one ``error`` row with the file, the
  offset and the length, and reading resumes at the next gzip member or ``WARC/1.`` line.
* Parsing a record is left to the field's libraries: FastWARC parses the WARC and HTTP headers,
  Resiliparse detects the charset (HTTP header, then ``<meta>``, then uchardet, WHATWG-mapped), decodes,
  parses the DOM and extracts the main text (``main_content=True``) and the ``<title>``.
* Local files and byte ranges share one path: a range is read with :func:`read_range` (a local path,
  ``file://``, ``http(s)://`` with a ``Range`` request, or ``s3://bucket/key`` through the bucket's https
  endpoint) and its bytes go through the same :func:`rows_from_member` as a member of a local file, so
  the same record gives the same row either way.

Every record read gives one row with a ``status`` (``extracted``, ``skipped_non_html``,
``skipped_status``, ``skipped_revisit``, ``skipped_request``, ``skipped_other_type`` or ``error``) and a
``detail``; no record is dropped silently and no bad record stops the others.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import io
import mmap
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = b"WARC/1."
WARC_SUFFIXES = (".warc", ".warc.gz")
HTML_TYPES = ("text/html", "application/xhtml+xml")
CHUNK = 1 << 16
MAX_HEADER_BYTES = 1 << 16
SOURCE = "warc"

STATUSES = (
    "extracted",
    "skipped_non_html",
    "skipped_status",
    "skipped_revisit",
    "skipped_request",
    "skipped_other_type",
    "error",
)

SCHEMA = pa.schema(
    [
        ("warc_filename", pa.string()),
        ("warc_record_offset", pa.int64()),
        ("warc_record_length", pa.int64()),
        ("warc_member_record", pa.int32()),
        ("status", pa.string()),
        ("detail", pa.string()),
        ("warc_type", pa.string()),
        ("warc_record_id", pa.string()),
        ("warc_date", pa.timestamp("us")),
        ("url", pa.string()),
        ("http_status", pa.int32()),
        ("content_type", pa.string()),
        ("charset", pa.string()),
        ("content_digest", pa.string()),
        ("doc_id", pa.string()),
        ("source", pa.string()),
        ("domain", pa.string()),
        ("crawled_at", pa.timestamp("us")),
        ("title", pa.string()),
        ("body", pa.string()),
    ]
)


class WarcInputError(ValueError):
    """Bad WARC input settings (a missing file, a ranges table without a required column, ...)."""


@dataclass(frozen=True)
class Span:
    """A stretch of a file: one gzip member (or uncompressed record), or bytes that could not be read."""

    offset: int
    length: int
    data: bytes | None  # decompressed member / record bytes; None when the span is an error
    error: str | None = None


# --------------------------------------------------------------------------------------------- framing


def _next(buffer, needle: bytes, start: int) -> int:
    found = buffer.find(needle, start)
    return len(buffer) if found < 0 else found


def iter_gzip_members(buffer) -> Iterator[Span]:
    """Split a buffer (bytes or mmap) of concatenated gzip members into members, with compressed spans.

    A member that does not decompress (corrupt, truncated, not gzip) is one error span running to the
    next gzip header, where reading resumes.
    """
    position, size = 0, len(buffer)
    while position < size:
        decompressor = zlib.decompressobj(wbits=31)
        pieces, cursor, error = [], position, None
        try:
            while not decompressor.eof:
                if cursor >= size:
                    error = "truncated gzip member (unexpected end of file)"
                    break
                chunk = buffer[cursor : cursor + CHUNK]
                pieces.append(decompressor.decompress(chunk))
                cursor += len(chunk) - len(decompressor.unused_data)
        except zlib.error as exc:
            error = f"corrupt gzip member ({exc})"
        if error is None:
            yield Span(position, cursor - position, b"".join(pieces))
            position = cursor
        else:
            resume = _next(buffer, GZIP_MAGIC, position + 1)
            yield Span(position, resume - position, None, error)
            position = resume


def _content_length(header: bytes) -> int | None:
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
            return length if length >= 0 else None
    return None


def iter_warc_records(buffer, base: int = 0) -> Iterator[Span]:
    """Split uncompressed WARC bytes into records by their Content-Length (offsets relative to ``base``).

    Bytes that are not a complete record become an error span running to the next ``WARC/1.`` (or the
    end); a record whose block is shorter than its Content-Length is reported as truncated.
    """
    position, size = 0, len(buffer)
    while position < size:
        while position < size and buffer[position : position + 1] in (b"\r", b"\n"):
            position += 1
        if position >= size:
            return
        error, end = None, None
        header_end = buffer.find(b"\r\n\r\n", position, position + MAX_HEADER_BYTES)
        if buffer[position : position + len(WARC_MAGIC)] != WARC_MAGIC:
            error = "not a WARC record (no 'WARC/1.' version line)"
        elif header_end < 0:
            error = "truncated or oversized WARC header (no blank line after the headers)"
        else:
            length = _content_length(bytes(buffer[position:header_end]))
            if length is None:
                error = "WARC header has no valid Content-Length"
            elif header_end + 4 + length > size:
                available = size - header_end - 4
                error = f"truncated record: Content-Length {length} but only {available} byte(s) follow"
                end = size
            else:
                end = header_end + 4 + length
                # the record's two trailing CRLFs (tolerated when missing)
                for _ in range(2):
                    if buffer[end : end + 2] == b"\r\n":
                        end += 2
        if error is None:
            yield Span(base + position, end - position, bytes(buffer[position:end]))
            position = end
        else:
            resume = end if end is not None else _next(buffer, WARC_MAGIC, position + 1)
            yield Span(base + position, resume - position, None, error)
            position = resume


# ------------------------------------------------------------------------------------ record -> row


def _empty_row(filename: str, offset: int, length: int, index: int) -> dict:
    row = dict.fromkeys(SCHEMA.names)
    row.update(
        warc_filename=filename, warc_record_offset=offset, warc_record_length=length, warc_member_record=index
    )
    return row


def error_row(filename: str, offset: int, length: int, message: str, index: int = 0) -> dict:
    row = _empty_row(filename, offset, length, index)
    row.update(status="error", detail=message)
    return row


def parse_warc_date(value: str | None) -> dt.datetime | None:
    """WARC-Date (ISO 8601, UTC, optionally with fractional seconds) as a naive UTC datetime."""
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


def host_of(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return urllib.parse.urlsplit(url.strip()).hostname
    except ValueError:
        return None


def make_doc_id(record_id: str | None, url: str | None, warc_date: str | None) -> str:
    """Stable document id: the WARC-Record-ID (a URN, unique per record by the WARC standard) without its
    angle brackets; for a record without one, ``url-sha1:`` + sha1 of the target URI and WARC-Date."""
    if record_id and record_id.strip().strip("<>").strip():
        return record_id.strip().strip("<>").strip()
    key = f"{url or ''}\n{warc_date or ''}".encode()
    return "url-sha1:" + hashlib.sha1(key).hexdigest()


def decode_html(payload: bytes, http_charset: str | None) -> tuple[str, str]:
    """Decode an HTML payload: the HTTP charset if valid, else <meta>, else uchardet (WHATWG names)."""
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding, map_encoding_to_html5

    encoding = None
    if http_charset:
        try:
            encoding = map_encoding_to_html5(http_charset.strip().strip("\"'"))
            "".encode(encoding)
        except (LookupError, ValueError, TypeError):
            encoding = None
    if not encoding:
        encoding = detect_encoding(payload, from_html_meta=True)
    return bytes_to_str(payload, encoding), encoding


def extract_html(text: str) -> tuple[str | None, str]:
    """(<title>, main text) of an HTML document with Resiliparse's main-content extraction."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(text)
    title = tree.title.strip() if tree.title else None
    body = extract_plain_text(tree, main_content=True, alt_texts=False, list_bullets=False)
    return title or None, body


def _header(headers, name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else str(value)


def record_row(record_bytes: bytes, filename: str, offset: int, length: int, index: int = 0) -> dict:
    """One row for one framed, uncompressed WARC record; never raises (a failure is an error row)."""
    try:
        return _record_row(record_bytes, filename, offset, length, index)
    except Exception as exc:  # any failure of one record is reported, never fatal
        return error_row(filename, offset, length, f"{type(exc).__name__}: {exc}", index)


def _record_row(record_bytes: bytes, filename: str, offset: int, length: int, index: int) -> dict:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    row = _empty_row(filename, offset, length, index)
    records = ArchiveIterator(
        io.BytesIO(record_bytes), record_types=WarcRecordType.any_type, parse_http=True, auto_decode="all"
    )
    record = next(iter(records), None)
    if record is None:
        return error_row(filename, offset, length, "no WARC record could be parsed", index)
    headers = record.headers
    warc_type = (_header(headers, "WARC-Type") or "").strip().lower()
    url = _header(headers, "WARC-Target-URI")
    url = url.strip().strip("<>") if url else None
    date_text = _header(headers, "WARC-Date")
    record_id = _header(headers, "WARC-Record-ID")
    row.update(
        warc_type=warc_type or None,
        warc_record_id=record_id,
        warc_date=parse_warc_date(date_text),
        url=url,
        domain=host_of(url),
        content_digest=_header(headers, "WARC-Payload-Digest"),
    )
    if warc_type == "request":
        return {**row, "status": "skipped_request", "detail": "request record"}
    if warc_type == "revisit":
        return {**row, "status": "skipped_revisit", "detail": "revisit record"}
    if warc_type != "response":
        return {**row, "status": "skipped_other_type", "detail": f"{warc_type or 'no'} record type"}
    if not record.is_http:
        content_type = _header(headers, "Content-Type")
        return {**row, "status": "skipped_other_type", "detail": f"response is not HTTP ({content_type})"}
    http_status = record.http_headers.status_code
    content_type = (record.http_content_type or "").strip().lower() or None
    row.update(http_status=http_status, content_type=content_type)
    if http_status != 200:
        return {**row, "status": "skipped_status", "detail": f"http status {http_status}"}
    if content_type not in HTML_TYPES:
        return {**row, "status": "skipped_non_html", "detail": f"content type {content_type or 'missing'}"}
    if row["warc_date"] is None:
        return {**row, "status": "error", "detail": f"missing or invalid WARC-Date {date_text!r}"}
    payload = record.reader.read()
    text, charset = decode_html(payload, record.http_charset)
    title, body = extract_html(text)
    return {
        **row,
        "status": "extracted",
        "charset": charset,
        "doc_id": make_doc_id(record_id, url, date_text),
        "source": SOURCE,
        "crawled_at": row["warc_date"],
        "title": title,
        "body": body,
    }


def rows_from_member(raw: bytes, filename: str, offset: int, length: int | None = None) -> list[dict]:
    """Rows of one gzip member (or one uncompressed record) read from ``filename`` at ``offset``.

    The path shared by local files and byte ranges.  Every row carries the member's own offset and
    length; a member holding several records (a whole file gzipped as one stream) gives one row per
    record, numbered by warc_member_record.
    """
    length = len(raw) if length is None else length
    trailing = None
    if raw[:2] == GZIP_MAGIC[:2]:
        member = next(iter_gzip_members(raw))
        if member.error:
            return [error_row(filename, offset, length, member.error)]
        data = member.data
        if member.length < len(raw):
            trailing = (
                f"{len(raw) - member.length} byte(s) after the gzip member (a range must be one member)"
            )
    else:
        data = raw
    rows = []
    for index, span in enumerate(iter_warc_records(data)):
        if span.error:
            message = span.error if span.offset == 0 else f"{span.error} at byte {span.offset} of the member"
            rows.append(error_row(filename, offset, length, message, index))
        else:
            rows.append(record_row(span.data, filename, offset, length, index))
    if not rows:
        rows.append(error_row(filename, offset, length, "empty member: no WARC record"))
    if trailing:
        rows.append(error_row(filename, offset, length, trailing, len(rows)))
    return rows


# ------------------------------------------------------------------------------------------ local files


def _glob_root(pattern: str) -> str:
    parts = []
    for part in pattern.split(os.sep):
        if glob.has_magic(part):
            break
        parts.append(part)
    return os.sep.join(parts) or "."


def list_warc_files(spec: str) -> list[tuple[str, str]]:
    """(path, warc_filename) of the WARC files named by a file, a folder (recursive) or a glob, sorted.

    warc_filename is the path relative to the folder (or the glob's fixed prefix, or the file's folder),
    the way Common Crawl names files relative to its bucket.
    """
    spec = spec.strip()
    if os.path.isfile(spec):
        return [(spec, os.path.basename(spec))]
    if os.path.isdir(spec):
        root = spec
        found = [
            p
            for p in glob.glob(os.path.join(spec, "**", "*"), recursive=True)
            if p.lower().endswith(WARC_SUFFIXES) and os.path.isfile(p)
        ]
        if not found:
            raise WarcInputError(f"warc_paths '{spec}' is a folder without .warc or .warc.gz files")
    elif glob.has_magic(spec):
        root = _glob_root(spec)
        found = [p for p in glob.glob(spec, recursive=True) if os.path.isfile(p)]
        if not found:
            raise WarcInputError(f"warc_paths '{spec}' matched no files")
    else:
        raise WarcInputError(f"warc_paths '{spec}': no such file or folder")
    return sorted((p, os.path.relpath(p, root)) for p in found)


def iter_file_rows(path: str, filename: str) -> Iterator[dict]:
    """Rows of every record of one local WARC file (gzip members or uncompressed records)."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            yield error_row(filename, 0, 0, "empty file: no WARC record")
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            # gzip by name or content: a damaged first member must not turn the file into plain WARC
            if path.lower().endswith(".gz") or buffer[:2] == GZIP_MAGIC[:2]:
                for member in iter_gzip_members(buffer):
                    if member.error:
                        yield error_row(filename, member.offset, member.length, member.error)
                    else:
                        # the member's compressed bytes go through the same path as a byte range
                        raw = buffer[member.offset : member.offset + member.length]
                        yield from rows_from_member(raw, filename, member.offset, member.length)
            else:
                for span in iter_warc_records(buffer):
                    if span.error:
                        yield error_row(filename, span.offset, span.length, span.error)
                    else:
                        yield from rows_from_member(span.data, filename, span.offset, span.length)


# ------------------------------------------------------------------------------------------ byte ranges


def resolve_location(filename: str, base: str) -> str:
    """Where to read ``filename`` from: itself when it is a URL or an absolute path, else ``base`` + it."""
    if "://" in filename or os.path.isabs(filename) or not base:
        return filename
    if "://" in base:
        return base.rstrip("/") + "/" + filename.lstrip("/")
    return os.path.join(base, filename)


def http_url(location: str) -> str:
    """s3://bucket/key -> https://bucket.s3.amazonaws.com/key (public buckets); http(s) unchanged."""
    parsed = urllib.parse.urlsplit(location)
    if parsed.scheme == "s3":
        return f"https://{parsed.netloc}.s3.amazonaws.com/{parsed.path.lstrip('/')}"
    return location


def read_range(location: str, offset: int, length: int, *, retries: int = 3, timeout: float = 60.0) -> bytes:
    """``length`` bytes at ``offset`` of a local file, a file:// URL, an http(s):// URL (Range request)
    or an s3:// URL (through the bucket's https endpoint).  Raises OSError on a short or failed read."""
    if offset < 0 or length <= 0:
        raise ValueError(f"invalid byte range: offset {offset}, length {length}")
    parsed = urllib.parse.urlsplit(location)
    if parsed.scheme in ("", "file") or (len(parsed.scheme) == 1 and os.name == "nt"):
        path = urllib.request.url2pathname(parsed.path) if parsed.scheme == "file" else location
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length)
    elif parsed.scheme in ("http", "https", "s3"):
        data = _http_range(http_url(location), offset, length, retries=retries, timeout=timeout)
    else:
        raise ValueError(f"unsupported URL scheme '{parsed.scheme}' in {location}")
    if len(data) != length:
        raise OSError(f"short read: {len(data)} of {length} byte(s) at offset {offset}")
    return data


def _http_range(url: str, offset: int, length: int, *, retries: int, timeout: float) -> bytes:
    request = urllib.request.Request(
        url, headers={"Range": f"bytes={offset}-{offset + length - 1}", "User-Agent": "web-text-dedup/1.0"}
    )
    for attempt in range(retries + 1):
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                if response.status == 206:
                    return response.read()
                # a server that ignores Range sends the whole file: cut the range out of it
                return response.read()[offset : offset + length]
        except urllib.error.HTTPError as exc:
            if exc.code not in (429, 500, 502, 503, 504) or attempt == retries:
                raise OSError(f"HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            if attempt == retries:
                raise OSError(f"cannot read {url}: {exc}") from None
        time.sleep(min(2.0**attempt, 10.0))
    raise OSError(f"cannot read {url}")  # pragma: no cover


RANGE_COLUMNS = {
    "filename": ("warc_filename", "filename"),
    "offset": ("warc_record_offset", "offset"),
    "length": ("warc_record_length", "length"),
}


def read_ranges_table(path: str) -> list[tuple[int, str, int, int]]:
    """(table row, filename, offset, length) of a CSV or Parquet ranges table (Common Crawl index columns
    warc_filename, warc_record_offset, warc_record_length; or filename, offset, length)."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if not os.path.isfile(path):
        raise WarcInputError(f"warc_ranges_path '{path}': no such file")
    lowered = path.lower()
    if lowered.endswith((".parquet", ".pq")):
        table = pq.read_table(path)
    elif lowered.endswith((".csv", ".csv.gz")):
        table = pacsv.read_csv(
            path, convert_options=pacsv.ConvertOptions(column_types={}, strings_can_be_null=False)
        )
    else:
        raise WarcInputError(f"warc_ranges_path '{path}' is not a .csv or .parquet file")
    names = {name.lower(): name for name in table.column_names}
    chosen = {}
    for key, candidates in RANGE_COLUMNS.items():
        match = next((names[c] for c in candidates if c in names), None)
        if match is None:
            raise WarcInputError(
                f"warc_ranges_path '{path}' is missing required column {' or '.join(candidates)}"
                f" (found: {', '.join(table.column_names)})"
            )
        chosen[key] = table.column(match).to_pylist()
    ranges = []
    for number, (filename, offset, length) in enumerate(
        zip(chosen["filename"], chosen["offset"], chosen["length"], strict=True), start=1
    ):
        problem = None
        try:
            offset_value, length_value = int(str(offset).strip()), int(str(length).strip())
        except (TypeError, ValueError):
            problem = f"offset {offset!r} and length {length!r} must be integers"
        else:
            if offset_value < 0 or length_value <= 0:
                problem = f"offset {offset_value} must be >= 0 and length {length_value} > 0"
        if not problem and (filename is None or not str(filename).strip()):
            problem = "empty filename"
        if problem:
            raise WarcInputError(f"warc_ranges_path '{path}' row {number}: {problem}")
        ranges.append((number, str(filename).strip(), offset_value, length_value))
    return ranges


def iter_range_rows(
    ranges: list[tuple[int, str, int, int]], base: str, workers: int = 8
) -> Iterator[list[dict]]:
    """Rows of every pinned range, in table order; ranges are fetched by ``workers`` threads."""

    def fetch(item):
        _, filename, offset, length = item
        try:
            raw = read_range(resolve_location(filename, base), offset, length)
        except Exception as exc:  # a range that cannot be read is an error row
            return [error_row(filename, offset, length, f"cannot read range: {type(exc).__name__}: {exc}")]
        return rows_from_member(raw, filename, offset, length)

    if workers <= 1:
        yield from map(fetch, ranges)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(fetch, ranges)


# ------------------------------------------------------------------------------------------- the model


def _log(message: str) -> None:
    print(f"[warc] {message}", flush=True)


def iter_rows(warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "") -> Iterator[dict]:
    """Every row of the configured inputs: local files first (sorted), then the ranges table in order."""
    if not (warc_paths or warc_ranges_path):
        raise WarcInputError("set var warc_paths or warc_ranges_path")
    if warc_paths:
        for path, filename in list_warc_files(warc_paths):
            yield from iter_file_rows(path, filename)
    if warc_ranges_path:
        ranges = read_ranges_table(warc_ranges_path)
        base = warc_base_url or os.path.dirname(os.path.abspath(warc_ranges_path))
        for rows in iter_range_rows(ranges, base):
            yield from rows


def read_warc_batches(
    warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "", batch_rows: int = 1000
) -> pa.RecordBatchReader:
    """The stg_warc_records table as a stream of record batches; logs counts per status and each error."""
    # fail fast on bad settings (missing file, bad ranges table) before the stream starts
    if warc_paths:
        list_warc_files(warc_paths)
    if warc_ranges_path:
        read_ranges_table(warc_ranges_path)

    def batches() -> Iterable[pa.RecordBatch]:
        counts: Counter = Counter()
        pending = []
        for row in iter_rows(warc_paths, warc_ranges_path, warc_base_url):
            counts[row["status"]] += 1
            if row["status"] == "error":
                _log(
                    f"error in {row['warc_filename']} at offset {row['warc_record_offset']}: {row['detail']}"
                )
            pending.append(row)
            if len(pending) >= batch_rows:
                yield pa.RecordBatch.from_pylist(pending, schema=SCHEMA)
                pending = []
        if pending:
            yield pa.RecordBatch.from_pylist(pending, schema=SCHEMA)
        _log(
            f"{sum(counts.values())} record(s) read: "
            + ", ".join(f"{status} {counts[status]}" for status in STATUSES)
        )

    return pa.RecordBatchReader.from_batches(SCHEMA, batches())


def read_warc_table(warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "") -> pa.Table:
    """All rows as one table (tests and small inputs)."""
    return read_warc_batches(warc_paths, warc_ranges_path, warc_base_url).read_all()
