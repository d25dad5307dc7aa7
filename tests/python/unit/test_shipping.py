"""The archive Spark executors import webdedup from (webdedup/shipping.py): in a fresh interpreter that
finds webdedup only in the archive, the modules load from an unpacked copy and numba loads every kernel
from the shipped machine code instead of compiling it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from webdedup import shipping
from webdedup.core import warm

PACKAGE = Path(shipping.__file__).resolve().parent

EXECUTOR = """
import json, sys
sys.path.insert(0, sys.argv[1])
import webdedup
from webdedup.core import kernels, warm
warm.warm()
dispatchers = [v for v in vars(kernels).values() if hasattr(v, "stats")]
print(json.dumps({
    "path": list(webdedup.__path__),
    "kernels": kernels.__file__,
    "hits": sum(sum(d.stats.cache_hits.values()) for d in dispatchers),
    "misses": sum(sum(d.stats.cache_misses.values()) for d in dispatchers),
}))
"""


def test_the_archive_holds_the_sources_and_the_numba_cache(tmp_path):
    warm.warm()
    archive = shipping.build_archive(PACKAGE, tmp_path / "webdedup.zip")
    names = zipfile.ZipFile(archive).namelist()
    assert "webdedup/__init__.py" in names and "webdedup/core/kernels.py" in names
    cached = [n for n in names if n.startswith("webdedup/core/__pycache__/kernels.minhash-")]
    assert any(n.endswith(".nbc") for n in cached) and any(n.endswith(".nbi") for n in cached)
    assert not any(n.endswith(".pyc") for n in names)


def test_an_executor_loads_the_kernels_from_the_shipped_cache(tmp_path):
    warm.warm()
    archive = shipping.build_archive(PACKAGE, tmp_path / "webdedup.zip")
    temp = tmp_path / "executor-tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    env["TMPDIR"] = str(temp)
    result = subprocess.run(
        [sys.executable, "-c", EXECUTOR, str(archive)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    unpacked = [p for p in temp.iterdir() if p.name.startswith(shipping.UNPACKED_PREFIX)]
    assert len(unpacked) == 1 and "." not in unpacked[0].name  # one complete folder, no leftover staging
    assert seen["path"] == [str(unpacked[0] / "webdedup")]
    assert seen["kernels"].startswith(str(unpacked[0]))
    assert seen["hits"] > 0 and seen["misses"] == 0, seen
