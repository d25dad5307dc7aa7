"""DuckDB's default memory limit for this project: a share of the machine's memory, capped.

DuckDB's own default is 80% of physical memory, which a build uses for caching and sorting; beside it
run the Python models (fingerprint threads, the blocked exact-Jaccard merge) and the Arrow buffers
between them, outside DuckDB's limit.  The project's default is a quarter of the memory this process
may use (physical memory, or a lower cgroup limit in a container), at most 3 GB and at least 1 GB: a
1M-page build then peaks under 4 GB, and a 16 GB laptop keeps three quarters of its memory.
``DEDUP_MEMORY_LIMIT`` (any DuckDB size, e.g. ``8GB``) overrides it.

DuckDB fills its limit with cached table blocks, so a Python model that holds a large buffer of its own
(the blocked exact-Jaccard merge's resident sets) borrows that much of the limit while it runs
(``lend``): DuckDB's limit plus the Python buffers stay within the configured limit plus the interpreter.

DuckDB reads a stored text column a vector of 2,048 rows at a time, and decompresses a zstd vector into one
buffer of its text rounded up to a power of two: 2,048 pages of 540 KB need 2 GiB per reader, more than the
default limit holds for two readers.  Once the documents are staged, ``size_for_text_vectors`` raises a
derived limit (never one set explicitly) to hold every concurrent reader's buffer.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path

ENV_VAR = "DEDUP_MEMORY_LIMIT"
SHARE = 0.25
CAP_BYTES = 3 * 1000**3
FLOOR_BYTES = 1000**3
_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_memory_bytes() -> int | None:
    """Physical memory, or the process's cgroup limit when that is lower; None when unknown."""
    sizes = []
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    for path in _CGROUP_LIMITS:
        try:
            text = Path(path).read_text(encoding="ascii").strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 1 << 60:  # "max" or a huge number: no limit
            sizes.append(int(text))
    return min(sizes) if sizes else None


def default_memory_limit(total_bytes: int | None) -> str:
    """A quarter of ``total_bytes``, clamped to [1 GB, 3 GB], as a DuckDB size in MB (3 GB if unknown)."""
    limit = CAP_BYTES if total_bytes is None else min(CAP_BYTES, max(FLOOR_BYTES, int(total_bytes * SHARE)))
    return f"{limit // 1000**2}MB"


def memory_limit(environ=os.environ) -> str:
    """``DEDUP_MEMORY_LIMIT`` when set (and not empty), else the machine-derived default."""
    chosen = environ.get(ENV_VAR, "").strip()
    return chosen or default_memory_limit(machine_memory_bytes())


#: What DuckDB's memory limit makes room for while a fingerprint or shingle-set stream is written
#: (``lend``): the batches in flight, and DuckDB's buffers for the rows it is given beyond the cached
#: tables.  Measured on 1M pages of real prose: int_shingle_sets alone peaked at 3.81 GB of RSS with
#: DuckDB's 3000MB limit and 3.36 GB at 2500MB.
STREAM_LEND_BYTES = 512 * 1000**2

_UNITS = {"": 1, "b": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?\s*$", re.IGNORECASE)
_lent = {"bytes": 0, "configured": None, "derived": False, "opened": None}
_lending = threading.Lock()


def size_bytes(text: str) -> int | None:
    """Bytes of a DuckDB size such as ``3000MB``, ``3GB``, ``2.5GiB`` (KB = 1000, KiB = 1024); None for
    anything else (a percentage, an unknown unit)."""
    found = _SIZE.match(str(text or ""))
    if not found or (not found.group(2) and found.group(3)):
        return None
    unit = found.group(2).lower()
    scale = 1024 ** "bkmgt".index(unit or "b") if found.group(3) else _UNITS[unit]
    return int(float(found.group(1)) * scale)


def allocator_settings(limit: str) -> dict:
    """DuckDB allocator settings that keep the memory a build frees for its next use, from the memory limit.

    Memory a process hands back to the kernel costs again when it is touched next: a page fault each
    4 KB, and on a virtual machine that reports free memory to its host (as this project's 2-core
    benchmark machine does) a fault in the host too, about 5 s per GB.  A default 1M-page build faulted
    5.3 million pages (21 GB) for a peak of 3.5 GB of memory, and spent 36 of its 134 CPU seconds in
    the kernel (docs/benchmarks.md, session 25).  So DuckDB keeps its buffer blocks in its block
    allocator up to half the memory limit (the other half is what ``lend`` may take for Python's
    buffers) and does not flush its allocator's caches below the limit.  The memory limit still bounds
    what DuckDB uses; the settings decide only when freed memory goes back to the kernel.  Sizes that
    ``size_bytes`` cannot read (a percentage) leave DuckDB's defaults."""
    limit_bytes = size_bytes(limit)
    if not limit_bytes:
        return {}
    whole_limit = f"{limit_bytes // 1000**2}MB"
    return {
        "block_allocator_memory": f"{limit_bytes // 2 // 1000**2}MB",
        "allocator_flush_threshold": whole_limit,
        "allocator_bulk_deallocation_flush_threshold": whole_limit,
    }


def remember_configured(limit: str, derived: bool = False) -> None:
    """The limit the dbt connection was opened with (the plugin calls this): what ``lend`` lowers;
    ``derived`` when it is this module's default (neither DEDUP_MEMORY_LIMIT nor the profile set it)."""
    _lent["configured"] = limit
    _lent["derived"] = derived
    _lent["opened"] = limit


def text_vector_buffer(vector_text_bytes: int) -> int:
    """The buffer DuckDB allocates to decompress a vector holding this much text: the next power of two."""
    return 1 << (int(vector_text_bytes) - 1).bit_length() if vector_text_bytes > 0 else 0


def limit_for_text_vectors(configured: int, vector_text_bytes: int, readers: int, machine: int | None) -> int:
    """The memory limit that holds ``readers`` vector buffers at once beside half the configured limit
    (for everything else DuckDB keeps pinned), never below ``configured``, at most half the machine."""
    need = max(int(readers), 1) * text_vector_buffer(vector_text_bytes) + configured // 2
    ceiling = max(configured, machine // 2) if machine else need
    return max(configured, min(need, ceiling))


def size_for_text_vectors(connection, vector_text_bytes: int, readers: int) -> str:
    """Raise DuckDB's derived limit (and what ``lend`` restores) to ``limit_for_text_vectors``; an explicit
    limit is kept.  Returns the line to log when the limit changed or an explicit one looks too low.  The
    need is reckoned from the limit the connection was opened with, so sizing again for the same text (at
    the start of a run and after staging) changes nothing."""
    configured = _lent["configured"] or memory_limit()
    current = size_bytes(configured)
    opened = size_bytes(_lent["opened"] or configured) or current
    if not current or vector_text_bytes is None:
        return ""
    need = limit_for_text_vectors(opened, vector_text_bytes, readers, machine_memory_bytes())
    need = need // 1000**2 * 1000**2  # in whole MB, as the limit is set
    if need <= current:
        return ""
    why = (
        f"{readers} readers at once of stored text whose 2,048-row vectors hold up to "
        f"{vector_text_bytes / 1000**2:,.0f} MB (a {text_vector_buffer(vector_text_bytes) / 2**20:,.0f} MiB "
        "buffer each)"
    )
    if not _lent["derived"]:
        return f"memory_limit {configured} (set explicitly) may be too low for {why}: about {need // 10**6}MB"
    with _lending:
        _lent["configured"] = f"{need // 1000**2}MB"
        connection.execute(f"set memory_limit = '{(need - _lent['bytes']) // 1000**2}MB'")
    return f"DuckDB memory_limit raised from {configured} to {_lent['configured']} for {why}"


@contextlib.contextmanager
def lend(connection, nbytes: int):
    """Lower DuckDB's memory limit by ``nbytes`` (at most half of it) while the caller holds that much
    outside DuckDB, and restore it after; concurrent lenders add up.  Without a known limit, a no-op."""
    configured = _lent["configured"] or memory_limit()
    limit = size_bytes(configured)
    if not limit or nbytes <= 0:
        yield
        return
    with _lending:
        lent = min(int(nbytes), limit // 2 - _lent["bytes"])
        _lent["bytes"] += max(lent, 0)
        connection.execute(f"set memory_limit = '{(limit - _lent['bytes']) // 1000**2}MB'")
    try:
        yield
    finally:
        with _lending:
            _lent["bytes"] -= max(lent, 0)
            remaining = _lent["bytes"]
            connection.execute(
                f"set memory_limit = '{(limit - remaining) // 1000**2}MB'"
                if remaining
                else f"set memory_limit = '{configured}'"
            )
