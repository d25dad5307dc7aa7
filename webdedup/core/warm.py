"""Compile (or load from numba's cache) every kernel once: ``python -m webdedup.core.warm``.

``make`` runs it at install, so that no build pays the compilation (~7 s); the machine code is cached in
``webdedup/core/__pycache__``.  The settings below only choose argument types, not results.
"""

from __future__ import annotations

import pyarrow as pa

from webdedup.core import fingerprint


def warm() -> None:
    """Run every kernel once on tiny input, for the argument types the pipeline passes."""
    params = fingerprint.FingerprintParams.spec()
    for bodies in (["warm up the kernels", ""], [""]):
        batch = pa.record_batch({"doc_id": [str(i) for i in range(len(bodies))], "body": bodies})
        fingerprint.fingerprint_batch(batch, params)
        sets = fingerprint.shingle_set_batch(batch, params).column("shingle_set")
        fingerprint.shared_shingle_counts(sets, sets)


if __name__ == "__main__":
    warm()
