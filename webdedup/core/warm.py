"""Compile (or load from numba's cache) every kernel once: ``python -m webdedup.core.warm``.

``make`` runs it at install, so that no build pays the compilation (about 13 s on this machine); the
machine code is cached in ``webdedup/core/__pycache__``.  The settings below only choose argument types,
not results.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from webdedup.core import fingerprint, kernels


def warm() -> None:
    """Run every kernel once on tiny input, for the argument types the pipeline passes."""
    params = fingerprint.FingerprintParams.spec()
    for bodies in (["warm up the kernels", ""], [""], ["Ünïcode 한국어 Σ", "x"]):
        batch = pa.record_batch({"doc_id": [str(i) for i in range(len(bodies))], "body": bodies})
        fingerprint.fingerprint_batch(batch, params)
        sets = fingerprint.shingle_set_batch(batch, params).column("shingle_set")
        fingerprint.shared_shingle_counts(sets, sets)
    # exact scoring merges sets memory-mapped from its scratch file: read-only uint64 arrays
    values, starts = pa.array(np.arange(4)).to_numpy().view(np.uint64), np.array([0, 2], dtype=np.int64)
    out, rows = np.zeros(2, np.int64), np.arange(2)
    kernels.intersections(values, starts, starts + 2, values, starts, starts + 2, out, rows)


if __name__ == "__main__":
    warm()
