"""Read keys: what a build read (a local file with its size and modification time, or a byte range, and
the extractor's version), so that a later build reuses the rows of what it already read."""

from __future__ import annotations

import glob
import hashlib
import importlib.metadata
import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import pyarrow as pa


@cache
def extractor_version() -> str:
    """What extraction depends on: the code of this package (webdedup/warc/*.py) and the FastWARC and
    Resiliparse versions."""
    digest = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.py"))):
        with open(path, "rb") as handle:
            digest.update(os.path.basename(path).encode() + b"\0" + hashlib.sha256(handle.read()).digest())
    for package in ("fastwarc", "resiliparse"):
        digest.update(f"{package}=={importlib.metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


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


class StoredRows:
    """The rows an earlier build stored (the previous stg_warc_records), by read_key: ``keys``, the keys
    stored; ``failed``, those among them with a READ_FAILURE error row (not reused: a network error must
    not stick); ``batches(keys)``, record batches of those keys' rows with SCHEMA's columns."""

    keys: set[str]
    failed: set[str]

    def batches(self, keys: list[str]) -> Iterable[pa.RecordBatch]:  # pragma: no cover - interface
        raise NotImplementedError
