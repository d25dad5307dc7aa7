"""DuckDB's default memory limit for this project: a share of the machine's memory, capped.

DuckDB's own default is 80% of physical memory, which a build uses for caching and sorting; beside it
run the Python models (fingerprint threads, the blocked exact-Jaccard merge) and the Arrow buffers
between them, outside DuckDB's limit.  The project's default is a quarter of the memory this process
may use (physical memory, or a lower cgroup limit in a container), at most 3 GB and at least 1 GB: a
1M-page build then peaks under 4 GB, and a 16 GB laptop keeps three quarters of its memory.
``DEDUP_MEMORY_LIMIT`` (any DuckDB size, e.g. ``8GB``) overrides it.
"""

from __future__ import annotations

import contextlib
import os
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
