"""benchmarks/scale_benchmark.py::disk_parts: each part is the disk its files hold, and a file linked from
two parts (the published database is a hard link to the build file) counts once."""

from __future__ import annotations

import os

from benchmarks.scale_benchmark import disk_parts

BLOCK = 4096


def _file(path, blocks: int):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * blocks * BLOCK)
    return os.stat(path).st_blocks * 512  # what the file system allocated: the oracle


def test_each_part_counts_its_files_and_a_hard_link_counts_once(tmp_path):
    database = _file(tmp_path / "bench.duckdb", 8)
    spill = _file(tmp_path / "bench.duckdb.tmp" / "spill-1.bin", 3)
    outputs = _file(tmp_path / "output" / "a.parquet", 2) + _file(tmp_path / "output" / "x" / "p.csv", 1)
    parts = {"database": database, "spill": spill, "outputs": outputs}
    assert disk_parts(tmp_path) == {**parts, "published": 0}
    (tmp_path / "published").mkdir()
    os.link(tmp_path / "bench.duckdb", tmp_path / "published" / "bench.duckdb")
    assert disk_parts(tmp_path)["published"] == 0
    (tmp_path / "published" / "bench.duckdb").unlink()
    copy = _file(tmp_path / "published" / "bench.duckdb", 8)
    assert disk_parts(tmp_path) == {**parts, "published": copy}
