"""One row per WARC record: parse a framed record with FastWARC and decide its status.

The path shared by local files and byte ranges: a range's gzip member is decompressed by
:func:`rows_from_member`, and its bytes go through the same :func:`rows_from_data` as a member of a local
file (decompressed once, while framing the file), so the same record gives the same row either way.  No
record is dropped silently and no bad record stops the others: a failure is an ``error`` row.
"""

from __future__ import annotations

import io

import pyarrow as pa

from webdedup.warc.extract import decode_html, extract_html, host_of, make_doc_id, parse_warc_date
from webdedup.warc.framing import GZIP_MAGIC, iter_gzip_members, iter_warc_records
from webdedup.warc.schema import SCHEMA, Span, empty_row, error_row

HTML_TYPES = ("text/html", "application/xhtml+xml")
SOURCE = "warc"


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

    row = empty_row(filename, offset, length, index)
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
