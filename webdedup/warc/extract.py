"""From a parsed HTML response to a document: charset, main text and title (Resiliparse), and the
document's id, host and date from the WARC headers."""

from __future__ import annotations

import datetime as dt
import hashlib
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
