"""What the SQL layer needs to know about a CSV input file before DuckDB reads it (issue 14).

* :func:`csv_profile` scans a CSV file once, in chunks: the size in bytes of its largest row (rows end at
  a newline outside double quotes, so a quoted body with newlines is one row), from which the staging
  macro derives DuckDB's ``max_line_size`` instead of leaving DuckDB's 2 MB default; and whether every
  byte is UTF-8.  When it is not, either the rows are named (``invalid_utf8: error``, the default) or a
  repaired copy is written with each invalid byte sequence replaced by U+FFFD, exactly as Python's
  ``bytes.decode("utf-8", "replace")`` does and as a BINARY Parquet column is decoded under the same var
  (``invalid_utf8: replace``), and DuckDB reads the copy.
* :func:`decode_utf8_replace` is that decoding for a BINARY value (the ``webdedup_decode_utf8_replace`` SQL
  function).

Results are cached per (path, size, modification time, mode): staging compiles the input relation more
than once per build (the model and its post-hook).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import os
import sys

import numpy as np

CHUNK_BYTES = 64 * 1024 * 1024
DUCKDB_DEFAULT_MAX_LINE_SIZE = 2_000_000
MAX_NAMED_ROWS = 20
_cache: dict[tuple, str] = {}


def decode_utf8_replace(value: bytes | None) -> str | None:
    """A BINARY value as text, each invalid UTF-8 sequence replaced by U+FFFD."""
    return None if value is None else bytes(value).decode("utf-8", "replace")


def open_bytes(path: str):
    """The file's bytes, a gzip-compressed CSV (.csv.gz, as DuckDB reads it) decompressed."""
    return gzip.open(path, "rb") if path.lower().endswith(".gz") else open(path, "rb")


def largest_row_bytes(path: str) -> tuple[int, bool]:
    """(bytes of the largest row including its newline, whether the file is all UTF-8), in one pass.

    A newline ends a row when the number of double quotes before it is even (RFC 4180: a quote inside a
    quoted field is doubled, which keeps the parity)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    is_utf8 = True
    largest = 0
    row_start = 0  # absolute offset where the current row starts
    quotes_before = 0  # double quotes before the current chunk
    offset = 0
    with open_bytes(path) as handle:
        while chunk := handle.read(CHUNK_BYTES):
            if is_utf8:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    is_utf8 = False
            data = np.frombuffer(chunk, dtype=np.uint8)
            quotes = np.flatnonzero(data == 34)
            newlines = np.flatnonzero(data == 10)
            parity = (quotes_before + np.searchsorted(quotes, newlines)) % 2
            ends = newlines[parity == 0] + offset + 1  # absolute offsets just after each row
            if len(ends):
                starts = np.concatenate(([row_start], ends[:-1]))
                largest = max(largest, int((ends - starts).max()))
                row_start = int(ends[-1])
            quotes_before += len(quotes)
            offset += len(chunk)
    if is_utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            is_utf8 = False
    return max(largest, offset - row_start), is_utf8


def rows_with_invalid_utf8(path: str) -> list[str]:
    """The doc_id (else the row number) of each CSV row holding bytes that are not UTF-8 (error path only:
    Python's csv module, slower than DuckDB)."""
    csv.field_size_limit(sys.maxsize)
    named = []
    with open_bytes(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
        reader = csv.reader(text)
        header = next(reader, [])
        id_index = [name.strip().lower() for name in header].index("doc_id") if "doc_id" in header else None
        for number, row in enumerate(reader, start=1):
            if any(_has_escaped_bytes(field) for field in row):
                label = row[id_index] if id_index is not None and id_index < len(row) else ""
                named.append(label if label and not _has_escaped_bytes(label) else f"row {number}")
    return named


def _has_escaped_bytes(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def write_utf8_copy(path: str, target: str) -> str:
    """Write path to target with every invalid UTF-8 sequence replaced by U+FFFD (streamed)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temporary = f"{target}.{os.getpid()}.tmp"
    with open_bytes(path) as source, open(temporary, "wb") as out:
        while chunk := source.read(CHUNK_BYTES):
            out.write(decoder.decode(chunk).encode("utf-8"))
        out.write(decoder.decode(b"", final=True).encode("utf-8"))
    os.replace(temporary, target)
    return target


def csv_profile(path: str, invalid_utf8: str, work_dir: str) -> str:
    """JSON: {"read_path", "max_line_size", "invalid_rows"} for one CSV file.

    read_path is the file itself, or (invalid_utf8 = replace and the file is not all UTF-8) a repaired
    copy under work_dir; invalid_rows names the rows with bytes that are not UTF-8 when invalid_utf8 is
    error (the build then stops); max_line_size is at least DuckDB's default and one more than the
    largest row."""
    stat = os.stat(path)
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns, invalid_utf8, os.path.abspath(work_dir))
    if key in _cache:
        return _cache[key]
    largest, is_utf8 = largest_row_bytes(path)
    read_path, invalid_rows = path, []
    if not is_utf8:
        if invalid_utf8 == "replace":
            # one copy per input file: a changed file overwrites its copy instead of adding one
            name = hashlib.sha1(key[0].encode()).hexdigest()[:16] + ".csv"
            read_path = write_utf8_copy(path, os.path.join(work_dir, name))
            # U+FFFD takes 3 bytes where an invalid byte took 1
            largest *= 3
        else:
            invalid_rows = rows_with_invalid_utf8(path)
    result = json.dumps(
        {
            "read_path": read_path,
            "max_line_size": max(DUCKDB_DEFAULT_MAX_LINE_SIZE, largest + 1),
            "invalid_rows": invalid_rows[:MAX_NAMED_ROWS],
            "invalid_row_count": len(invalid_rows),
        }
    )
    _cache[key] = result
    return result
