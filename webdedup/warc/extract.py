"""From a parsed HTML response to a document: charset, main text and title (Resiliparse), and the
document's id, host and date from the WARC headers."""

from __future__ import annotations

import codecs
import datetime as dt
import hashlib
import re
import urllib.parse


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


#: Byte order marks and their encodings: a BOM decides the encoding before any declaration (WHATWG).
BYTE_ORDER_MARKS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"))
#: WHATWG's prescan reads the first 1024 bytes for <meta charset>; pages with long heads get more room here.
META_PRESCAN_BYTES = 4096
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.()-]+)", re.IGNORECASE)


def _html5_encoding(label: str | None) -> str | None:
    """The Python codec of a charset label by WHATWG's table (iso-8859-1 is windows-1252), else None."""
    from resiliparse.parse.encoding import map_encoding_to_html5

    if not label or not label.strip().strip("\"'"):
        return None
    try:
        encoding = map_encoding_to_html5(label.strip().strip("\"'"))
        codecs.lookup(encoding)
    except (LookupError, ValueError, TypeError):
        return None
    return encoding


def _meta_encoding(payload: bytes) -> str | None:
    """The <meta> charset of the page; UTF-16 there means UTF-8, as WHATWG says (a page that can be
    read as ASCII to find its meta is not UTF-16)."""
    found = _META_CHARSET.search(payload[:META_PRESCAN_BYTES])
    encoding = _html5_encoding(found.group(1).decode("ascii")) if found else None
    return "utf-8" if encoding and encoding.startswith("utf-16") else encoding


def decode_html(payload: bytes, http_charset: str | None) -> tuple[str, str]:
    """(text, the encoding used) of an HTML payload, in WHATWG's order: a byte order mark, else the
    HTTP charset, else <meta> charset.  A declared charset that the bytes do not decode with gives way
    to uchardet's detection when the bytes decode with that; otherwise the declared charset is used with
    U+FFFD for the invalid bytes, as a browser shows them.  The encoding returned is always the one used."""
    from resiliparse.parse.encoding import detect_encoding

    for mark, encoding in BYTE_ORDER_MARKS:
        if payload.startswith(mark):
            return payload[len(mark) :].decode(encoding, "replace"), encoding
    declared = _html5_encoding(http_charset) or _meta_encoding(payload)
    if declared:
        try:
            return payload.decode(declared), declared
        except UnicodeDecodeError:
            pass
    detected = _html5_encoding(detect_encoding(payload, from_html_meta=False)) or "utf-8"
    if detected != declared:
        try:
            return payload.decode(detected), detected
        except UnicodeDecodeError:
            pass
    used = declared or detected
    return payload.decode(used, "replace"), used


def extract_html(text: str) -> tuple[str | None, str]:
    """(<title>, main text) of an HTML document with Resiliparse's main-content extraction."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(text)
    title = tree.title.strip() if tree.title else None
    body = extract_plain_text(tree, main_content=True, alt_texts=False, list_bullets=False)
    return title or None, body
