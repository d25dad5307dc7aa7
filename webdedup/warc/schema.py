"""What stg_warc_records holds: one row per WARC record read, its columns (SCHEMA) and statuses.

The statuses and their meanings live in seeds/warc_record_statuses.csv (a dbt seed: the docs and the
warc_read_report model read it there); STATUSES is read from that file, in its report order.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass

import pyarrow as pa

# The detail of an error row for a byte range that could not be read (missing file, HTTP error, short
# read): such a range is read again by the next build instead of being reused.
READ_FAILURE = "cannot read range"

_STATUSES_SEED = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "seeds",
    "warc_record_statuses.csv",
)
with open(_STATUSES_SEED, encoding="utf-8", newline="") as _handle:
    STATUSES = tuple(
        row["status"] for row in sorted(csv.DictReader(_handle), key=lambda row: int(row["report_order"]))
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


def empty_row(filename: str, offset: int, length: int, index: int) -> dict:
    row = dict.fromkeys(SCHEMA.names)
    row.update(
        warc_filename=filename, warc_record_offset=offset, warc_record_length=length, warc_member_record=index
    )
    return row


def error_row(filename: str, offset: int, length: int, message: str, index: int = 0) -> dict:
    row = empty_row(filename, offset, length, index)
    row.update(status="error", detail=message)
    return row
