"""Where WARC bytes come from: local files, folders and globs, and byte ranges of local files, file://,
http(s):// (a Range request, retried on 429/5xx) and s3:// (the bucket's public https endpoint)."""

from __future__ import annotations

import glob
import os
import time
import urllib.error
import urllib.parse
import urllib.request

from webdedup.warc.schema import WarcInputError

WARC_SUFFIXES = (".warc", ".warc.gz")


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
        found = [p for p in _folder_files(spec) if p.lower().endswith(WARC_SUFFIXES)]
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


def files_not_read(spec: str) -> list[str]:
    """The files of a warc_paths folder that are not WARC files (not read; the reader logs them), sorted."""
    spec = spec.strip()
    if not os.path.isdir(spec):
        return []
    others = [p for p in _folder_files(spec) if not p.lower().endswith(WARC_SUFFIXES)]
    return sorted(os.path.relpath(p, spec) for p in others)


def _folder_files(folder: str) -> list[str]:
    """Every file under a folder (recursive)."""
    return [p for p in glob.glob(os.path.join(folder, "**", "*"), recursive=True) if os.path.isfile(p)]


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
