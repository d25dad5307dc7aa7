"""Framing: split a WARC file into its records, accounting for every byte.

A ``.warc.gz`` file is split into its gzip members (one record each, the layout Common Crawl and the WARC
standard recommend; a member's compressed offset and length are exactly the Common Crawl index's
``warc_record_offset`` and ``warc_record_length``), an uncompressed file into records by their
``Content-Length``.  Bytes that cannot be framed (a corrupt or truncated member, garbage) become one error
span with the offset and the length, and reading resumes at the next gzip member or ``WARC/1.`` line.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from webdedup.warc.schema import Span

GZIP_MAGIC = b"\x1f\x8b\x08"
WARC_MAGIC = b"WARC/1."
CHUNK = 1 << 16
MAX_HEADER_BYTES = 1 << 16


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
