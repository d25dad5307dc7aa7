"""Output folders compared across engines: every file, byte for byte where the format allows it.

An output is a file or (Spark's output_parts) a folder of part files part-00000.<ext>, ... in row order.
* CSV and SVG: the bytes must be equal; a CSV folder is read as its parts concatenated, the header kept
  once (each part carries one).
* Parquet: two engines' writers never give the same bytes (writer name, encodings), so the files must hold
  the same column names and Arrow types and the same rows in the same order, every value to the bit
  (DuckDB marks columns without nulls required, Spark never does: nullability is not compared).  An
  output written in the engine's own row order (var output_files' order_by null: the release, in input
  order on DuckDB, by doc_id on Spark) must hold the same rows in any order.
* manifest.json: equal except what names the run rather than the result: generated_at, backends (the
  engine and its macro implementations) and the outputs' sha256 (Parquet bytes, part layouts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.python.helpers.project import project_vars

RUN_KEYS = ("generated_at", "backends")


def unordered_outputs() -> set[str]:
    """The output files each engine writes in its own row order (var output_files' order_by null)."""
    return {entry["file"] for entry in project_vars()["output_files"].values() if not entry.get("order_by")}


def _rows(table: pa.Table, ordered: bool) -> list[dict]:
    rows = table.to_pylist()
    return rows if ordered else sorted(rows, key=lambda row: json.dumps(row, default=str, sort_keys=True))


def part_files(path: Path) -> list[Path]:
    """The files of an output: itself, or a part folder's parts in name (row) order."""
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.name.startswith("part-"))
    return [path]


def csv_bytes(path: Path) -> bytes:
    chunks = []
    for number, part in enumerate(part_files(path)):
        data = part.read_bytes()
        chunks.append(data if number == 0 else data.split(b"\n", 1)[1] if b"\n" in data else b"")
    return b"".join(chunks)


def parquet_table(path: Path) -> pa.Table:
    tables = [pq.read_table(part) for part in part_files(path)]
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def columns(table: pa.Table) -> list[tuple[str, str]]:
    return [(field.name, str(field.type)) for field in table.schema]


def manifest_without_run_keys(path: Path) -> dict:
    manifest = json.loads(path.read_text())
    for key in RUN_KEYS:
        manifest.pop(key)
    for output in manifest["outputs"]:
        output.pop("sha256")
    return manifest


def differences(expected_dir: Path, actual_dir: Path, names: list[str]) -> list[str]:
    """Every way the outputs `names` in actual_dir differ from expected_dir (empty when all agree)."""
    problems = []
    unordered = unordered_outputs()
    for name in names:
        expected, actual = expected_dir / name, actual_dir / name
        if not actual.exists():
            problems.append(f"{name}: missing")
        elif name == "manifest.json":
            if manifest_without_run_keys(actual) != manifest_without_run_keys(expected):
                problems.append(f"{name}: manifests differ beyond {RUN_KEYS} and sha256")
        elif name.endswith(".parquet"):
            left, right = parquet_table(expected), parquet_table(actual)
            if columns(left) != columns(right):
                problems.append(f"{name}: columns {columns(right)} != {columns(left)}")
            elif _rows(left, name not in unordered) != _rows(right, name not in unordered):
                problems.append(f"{name}: rows differ")
        elif name.endswith(".csv"):
            if csv_bytes(actual) != csv_bytes(expected):
                problems.append(f"{name}: bytes differ")
        elif actual.read_bytes() != expected.read_bytes():
            problems.append(f"{name}: bytes differ")
    return problems
