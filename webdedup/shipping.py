"""The package as Spark executors receive it: a zip of its sources and numba's machine code.

Off a local master the executors import ``webdedup`` only from the archive the driver ships
(``engines/spark_models.ship_package``).  Python imports modules from a zip, but numba cannot load or
keep compiled kernels there: every executor's Python worker would compile them again (about a minute
per worker on this machine).  So the archive also carries ``__pycache__``'s numba files (``*.nbi``,
``*.nbc``), and ``webdedup/__init__.py`` calls :func:`unpack_if_zipped`: imported from a zip, the package
unpacks it once per machine into a folder named after the archive's hash (under the temp folder) and
imports its modules from there, where numba finds the shipped machine code next to the sources.  numba
checks that code against the source's content hash and the CPU; on another CPU or numba it compiles as
before, so the shipped files can only save time, never change a result.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

NUMBA_SUFFIXES = (".nbi", ".nbc")
UNPACKED_PREFIX = "webdedup-shipped-"


def build_archive(package_dir: Path, archive: Path) -> Path:
    """Zip the package's .py files and numba cache files (in name order) as ``webdedup/...``."""
    package_dir = Path(package_dir)
    with zipfile.ZipFile(archive, "w") as zipped:
        for folder, dirs, names in os.walk(package_dir):
            dirs.sort()
            for name in sorted(names):
                in_cache = os.path.basename(folder) == "__pycache__"
                if name.endswith(".py") or (in_cache and name.endswith(NUMBA_SUFFIXES)):
                    path = Path(folder, name)
                    zipped.write(path, Path("webdedup", path.relative_to(package_dir)).as_posix())
    return archive


def _zip_of(init_file: str) -> Path | None:
    """The zip file ``init_file`` (a package's ``__init__.py``) was imported from, if any."""
    path = Path(init_file)
    for parent in path.parents:
        if parent.suffix == ".zip" and parent.is_file():
            return parent
    return None


def unpack_if_zipped(package_path: list[str], init_file: str) -> None:
    """Imported from a zip: unpack it (once per machine and archive content) and point the package's
    ``__path__`` at the unpacked folder, so that its submodules and numba's cache load from real files."""
    archive = _zip_of(init_file)
    if archive is None:
        return
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:20]
    target = Path(tempfile.gettempdir()) / f"{UNPACKED_PREFIX}{digest}"
    if not (target / "webdedup" / "__init__.py").is_file():
        staging = Path(tempfile.mkdtemp(prefix=f"{UNPACKED_PREFIX}{digest}.", dir=target.parent))
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(staging)
        try:
            os.rename(staging, target)  # atomic: a worker never sees a half-unpacked folder
        except OSError:  # another worker unpacked it first
            shutil.rmtree(staging, ignore_errors=True)
    package_path[:] = [str(target / "webdedup")]
