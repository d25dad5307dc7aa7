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
  endpoint), its gzip member is decompressed by :func:`rows_from_member`, and the bytes go through the
  same :func:`rows_from_data` as a member of a local file (decompressed once, while framing the file),
  so the same record gives the same row either way.

Every record read gives one row with a ``status`` (``extracted``, ``skipped_non_html``,
``skipped_status``, ``skipped_revisit``, ``skipped_request``, ``skipped_other_type`` or ``error``) and a
``detail``; no record is dropped silently and no bad record stops the others.

Each row also carries the ``read_key`` of what it was read from (a local file with its size and
modification time, or a byte range) and of the extractor (this module's code and the FastWARC and
Resiliparse versions).  A later build that finds the same key in its previous table reuses those rows
instead of reading and extracting again (:func:`read_warc_batches`, ``stored``), so a crawl folder that
gained a WARC file reads only that file.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import importlib.metadata
import io
import itertools
import mmap
import multiprocessing
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import pyarrow as pa
import pyarrow.compute as pc

GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = b"WARC/1."
WARC_SUFFIXES = (".warc", ".warc.gz")
HTML_TYPES = ("text/html", "application/xhtml+xml")
CHUNK = 1 << 16
MAX_HEADER_BYTES = 1 << 16
SOURCE = "warc"
# With workers > 1 (var warc_workers), local files holding more than this many bytes to read are parsed by
# worker processes: FastWARC and Resiliparse hold the GIL, so threads would not help, and a spawned
# worker takes ~2 s to start inside dbt, which pays off above ~64 MB of WARC.  Each task is
# SPANS_PER_TASK records and comes back as one Arrow record batch.  Opt-in: a spawned worker imports
# the main script of the process (dbt's entry point is safe; a script that runs dbt programmatically
# must guard its code with ``if __name__ == "__main__"``).
PARALLEL_MIN_BYTES = 64 << 20
SPANS_PER_TASK = 200
# The detail of an error row for a byte range that could not be read (missing file, HTTP error, short
# read): such a range is read again by the next build instead of being reused.
READ_FAILURE = "cannot read range"

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
        ("read_key", pa.string()),
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

    The path of a byte range: the member is decompressed here, then read by :func:`rows_from_data`, as
    the members of a local file are.
    """
    length = len(raw) if length is None else length
    if raw[:2] != GZIP_MAGIC[:2]:
        return rows_from_data(raw, filename, offset, length)
    member = next(iter_gzip_members(raw))
    if member.error:
        return [error_row(filename, offset, length, member.error)]
    rows = rows_from_data(member.data, filename, offset, length)
    if member.length < len(raw):
        trailing = f"{len(raw) - member.length} byte(s) after the gzip member (a range must be one member)"
        rows.append(error_row(filename, offset, length, trailing, len(rows)))
    return rows


def rows_from_data(data: bytes, filename: str, offset: int, length: int) -> list[dict]:
    """Rows of the uncompressed bytes of one gzip member (or one uncompressed record) of ``filename`` at
    ``offset``: the path shared by local files and byte ranges.  Every row carries the member's own
    offset and length; a member holding several records (a whole file gzipped as one stream) gives one
    row per record, numbered by warc_member_record."""
    rows = []
    for index, span in enumerate(iter_warc_records(data)):
        if span.error:
            message = span.error if span.offset == 0 else f"{span.error} at byte {span.offset} of the member"
            rows.append(error_row(filename, offset, length, message, index))
        else:
            rows.append(record_row(span.data, filename, offset, length, index))
    if not rows:
        rows.append(error_row(filename, offset, length, "empty member: no WARC record"))
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


def span_rows(filename: str, spans: list[Span]) -> list[dict]:
    """Rows of spans of ``filename``, in order (an error span is one error row)."""
    rows = []
    for span in spans:
        if span.error:
            rows.append(error_row(filename, span.offset, span.length, span.error))
        else:
            rows.extend(rows_from_data(span.data, filename, span.offset, span.length))
    return rows


def span_batch(filename: str, spans: list[Span], read_key: str | None) -> pa.RecordBatch:
    """span_rows as a record batch with ``read_key`` on every row: the task a worker process runs, so
    that the rows travel back as Arrow buffers, not as pickled dicts."""
    rows = span_rows(filename, spans)
    return pa.RecordBatch.from_pylist([{**row, "read_key": read_key} for row in rows], schema=SCHEMA)


def iter_file_batches(
    path: str, filename: str, read_key: str | None = None, pool: Executor | None = None, in_flight: int = 4
) -> Iterator[pa.RecordBatch]:
    """Record batches of every record of one local WARC file (gzip members or uncompressed records),
    in file order, SPANS_PER_TASK spans per batch.  With ``pool`` (worker processes) the batches are
    parsed and extracted there, at most ``in_flight`` at a time."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            error = {**error_row(filename, 0, 0, "empty file: no WARC record"), "read_key": read_key}
            yield pa.RecordBatch.from_pylist([error], schema=SCHEMA)
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
            # gzip by name or content: a damaged first member must not turn the file into plain WARC
            gzipped = path.lower().endswith(".gz") or buffer[:2] == GZIP_MAGIC[:2]
            # gzip members come out of the framing decompressed: each is decompressed once
            spans = iter_gzip_members(buffer) if gzipped else iter_warc_records(buffer)
            tasks: deque = deque()
            while chunk := list(itertools.islice(spans, SPANS_PER_TASK)):
                if pool is None:
                    yield span_batch(filename, chunk, read_key)
                    continue
                tasks.append(pool.submit(span_batch, filename, chunk, read_key))
                while len(tasks) >= in_flight:
                    yield tasks.popleft().result()
            while tasks:
                yield tasks.popleft().result()


def iter_file_rows(path: str, filename: str) -> Iterator[dict]:
    """Rows of every record of one local WARC file, read in this process (read_key None)."""
    for batch in iter_file_batches(path, filename):
        yield from batch.to_pylist()


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


def iter_range_rows(units: list[ReadUnit], workers: int = 8) -> Iterator[list[dict]]:
    """Rows of every byte-range unit, in order; ranges are fetched by ``workers`` threads."""

    def fetch(unit: ReadUnit) -> list[dict]:
        filename, offset, length = unit.filename, unit.offset, unit.length
        try:
            raw = read_range(unit.location, offset, length)
        except Exception as exc:  # a range that cannot be read is an error row
            return [error_row(filename, offset, length, f"{READ_FAILURE}: {type(exc).__name__}: {exc}")]
        return rows_from_member(raw, filename, offset, length)

    if workers <= 1:
        yield from map(fetch, units)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(fetch, units)


# ------------------------------------------------------------------------------------------ read units


@cache
def extractor_version() -> str:
    """What extraction depends on: this module's code and the FastWARC and Resiliparse versions."""
    with open(__file__, "rb") as handle:
        digest = hashlib.sha256(handle.read())
    for package in ("fastwarc", "resiliparse"):
        digest.update(f"{package}=={importlib.metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


def _file_version(path: str) -> str:
    status = os.stat(path)
    return f"size={status.st_size} mtime_ns={status.st_mtime_ns}"


@dataclass(frozen=True)
class ReadUnit:
    """What is read as a whole: a local WARC file (offset None) or one byte range.  ``key`` names it, its
    version (a local file's size and modification time; ranges of remote files are taken as immutable,
    as Common Crawl's are) and the extractor's."""

    key: str
    filename: str
    location: str
    offset: int | None = None
    length: int | None = None


def read_units(warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "") -> list[ReadUnit]:
    """The units of the configured inputs: local files first (sorted), then the ranges table in order.
    Raises WarcInputError on bad settings (a missing file, a bad ranges table) before anything is read."""
    if not (warc_paths or warc_ranges_path):
        raise WarcInputError("set var warc_paths or warc_ranges_path")
    units = []
    extractor = f"extractor={extractor_version()}"
    if warc_paths:
        for path, filename in list_warc_files(warc_paths):
            key = f"file {os.path.abspath(path)} {_file_version(path)} {extractor}"
            units.append(ReadUnit(key, filename, path))
    if warc_ranges_path:
        base = warc_base_url or os.path.dirname(os.path.abspath(warc_ranges_path))
        for _, filename, offset, length in read_ranges_table(warc_ranges_path):
            location = resolve_location(filename, base)
            version = _file_version(location) if os.path.isfile(location) else "remote"
            key = f"range {location} offset={offset} length={length} {version} {extractor}"
            units.append(ReadUnit(key, filename, location, offset, length))
    return units


# ------------------------------------------------------------------------------------------- the model


def _log(message: str) -> None:
    print(f"[warc] {message}", flush=True)


def _worker_count(files: list[ReadUnit], workers: int) -> int:
    """How many worker processes read ``files``: ``workers`` when it is above 1 and the files hold more
    than PARALLEL_MIN_BYTES, else 0 (in-process)."""
    size = sum(os.path.getsize(unit.location) for unit in files)
    return workers if workers > 1 and size > PARALLEL_MIN_BYTES else 0


def iter_batches(units: list[ReadUnit], workers: int = 1, batch_rows: int = 1000):
    """Record batches of every row of ``units``, each row with its unit's read_key: local files (in
    worker processes when large), then byte ranges (fetched by threads)."""
    files = [unit for unit in units if unit.offset is None]
    count = _worker_count(files, workers)
    # spawn: dbt runs models on threads, and forking a threaded process is unsafe
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn")) if count else None
    try:
        for unit in files:
            yield from iter_file_batches(unit.location, unit.filename, unit.key, pool, 2 * count)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    ranges = [unit for unit in units if unit.offset is not None]
    pending = []
    for unit, rows in zip(ranges, iter_range_rows(ranges), strict=True):
        pending.extend({**row, "read_key": unit.key} for row in rows)
        if len(pending) >= batch_rows:
            yield pa.RecordBatch.from_pylist(pending, schema=SCHEMA)
            pending = []
    if pending:
        yield pa.RecordBatch.from_pylist(pending, schema=SCHEMA)


class StoredRows:
    """The rows an earlier build stored (the previous stg_warc_records), by read_key: ``keys``, the keys
    stored; ``failed``, those among them with a READ_FAILURE error row (not reused: a network error must
    not stick); ``batches(keys)``, record batches of those keys' rows with SCHEMA's columns."""

    keys: set[str]
    failed: set[str]

    def batches(self, keys: list[str]) -> Iterable[pa.RecordBatch]:  # pragma: no cover - interface
        raise NotImplementedError


def read_warc_batches(
    warc_paths: str = "",
    warc_ranges_path: str = "",
    warc_base_url: str = "",
    batch_rows: int = 1000,
    stored: StoredRows | None = None,
    workers: int = 1,
) -> pa.RecordBatchReader:
    """The stg_warc_records table as a stream of record batches; logs counts per status and each error.
    Units whose read_key ``stored`` holds are not read again (unless reading them failed): their stored
    rows are passed on.
    ``workers``: processes for large local inputs (1: none; see PARALLEL_MIN_BYTES)."""
    units = read_units(warc_paths, warc_ranges_path, warc_base_url)  # fails fast on bad settings
    reused = ({unit.key for unit in units} & stored.keys) - stored.failed if stored else set()
    to_read = [unit for unit in units if unit.key not in reused]

    def batches() -> Iterable[pa.RecordBatch]:
        counts: Counter = Counter()
        reused_rows = 0
        if reused:
            for batch in stored.batches(sorted(reused)):
                batch = batch.select(SCHEMA.names).cast(SCHEMA)
                counts.update(batch.column("status").to_pylist())
                reused_rows += batch.num_rows
                yield batch
            _log(f"reused {reused_rows} record(s) of {len(reused)} file(s) or range(s) read by a past build")
        for batch in iter_batches(to_read, workers, batch_rows):
            statuses = batch.column("status").to_pylist()
            counts.update(statuses)
            if "error" in statuses:
                for row in batch.filter(pc.equal(batch.column("status"), "error")).to_pylist():
                    _log(
                        f"error in {row['warc_filename']} at offset {row['warc_record_offset']}: "
                        + row["detail"]
                    )
            yield batch
        total = sum(counts.values())
        _log(
            f"{total} record(s) ({total - reused_rows} read now from {len(to_read)} file(s) or range(s),"
            f" {reused_rows} reused): " + ", ".join(f"{status} {counts[status]}" for status in STATUSES)
        )

    return pa.RecordBatchReader.from_batches(SCHEMA, batches())


def read_warc_table(warc_paths: str = "", warc_ranges_path: str = "", warc_base_url: str = "") -> pa.Table:
    """All rows as one table (tests and small inputs)."""
    return read_warc_batches(warc_paths, warc_ranges_path, warc_base_url).read_all()
