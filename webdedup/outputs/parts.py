"""Outputs that an incremental build does not rewrite whole (var ``incremental_outputs``, DuckDB).

A keyed Parquet output (an entry of var output_files with a ``key``) is then a folder of parts,
``<file>/part-00000.parquet``, ``part-00001.parquet``, ...: part 0 holds every row of the build that
started the folder's history, each later part the rows one build changed.  Every part has the output's
columns plus two:

* ``part_change``: ``upsert`` (the row as this build has it) or ``delete`` (the key left the output; its
  other columns are null);
* ``part_row_hash``: DuckDB's ``hash`` of the row's columns, how the next build finds the rows it changed
  without reading the bodies of the parts.

The current output is, for each key, its row in the newest part that holds the key, unless that row is a
delete (``current_rows_sql``).  A build copies the published parts into its staging folder as hard links
(``stage_parts``), adds its own part only if a row changed, and is published like every output: the staged
folder replaces the published one only when the whole run succeeded.
"""

from __future__ import annotations

import glob
import json
import os

import pyarrow.parquet as pq

from webdedup.outputs.files import link_or_copy

PART_PREFIX = "part-"
CHANGE_COLUMN = "part_change"
HASH_COLUMN = "part_row_hash"
#: The column current_rows_sql names the part file in (read_parquet's ``filename`` option).
FILE_COLUMN = "part_file"
#: In the output folder, beside the folders of parts (in them, a glob of a folder's files would meet it): the
#: sha256 of every part the last manifest hashed, by file_stamp (JSON).  A part never changes once written
#: and the next build stages it as a hard link (the same inode and times), so that build's manifest reads
#: only the part it wrote, not every part of the release again (webdedup/outputs/manifest.py).
PART_HASHES_FILE = ".part-sha256.json"


def part_name(number: int, extension: str = ".parquet") -> str:
    return f"{PART_PREFIX}{int(number):05d}{extension}"


def part_numbers(folder: str) -> list[int]:
    """The numbers of the parts in ``folder``, ascending (empty when it has none or does not exist)."""
    numbers = []
    for path in glob.glob(parts_glob(folder)):
        digits = os.path.basename(path)[len(PART_PREFIX) :].split(".")[0]
        if digits.isdigit():
            numbers.append(int(digits))
    return sorted(numbers)


def holds_history(folder: str, key_columns: list[str]) -> bool:
    """Whether ``folder`` is a folder of parts a build can add to: at least one part, and the newest one
    has the key columns, part_change and part_row_hash (Spark's folders of parts and other files are not)."""
    numbers = part_numbers(folder)
    if not os.path.isdir(folder) or not numbers:
        return False
    names = set(pq.read_schema(os.path.join(folder, part_name(numbers[-1]))).names)
    return {CHANGE_COLUMN, HASH_COLUMN, *key_columns} <= names


def stage_parts(published: str, staged: str, key: str, compact: bool) -> str:
    """Create the staged folder of an output; return JSON naming the part this build writes: ``number``,
    ``path``, and ``published``, the SQL of the staged parts' newest hash per key (published_hashes_sql).

    Number 0 starts a new history (``compact``, no published parts, or a published output that is not a
    folder of parts with ``key``): the build writes every row.  Otherwise the published parts are linked
    into the staged folder (hard links, no bytes copied, where the file system has them) and the build
    adds the next number."""
    os.makedirs(staged, exist_ok=True)
    number = 0
    if not compact and holds_history(published, key_list(key)):
        numbers = part_numbers(published)
        for existing in numbers:
            name = part_name(existing)
            link_or_copy(os.path.join(published, name), os.path.join(staged, name))
        number = numbers[-1] + 1
    staged = os.path.abspath(staged)
    path = os.path.join(staged, part_name(number))
    return json.dumps({"number": number, "path": path, "published": published_hashes_sql(staged, key)})


def file_stamp(path: str) -> str:
    """A file as PART_HASHES_FILE knows it: its inode, size and modification time (a hard link to it has
    the same; another file under its name has another inode or time)."""
    stat = os.stat(path)
    return f"{stat.st_ino} {stat.st_size} {stat.st_mtime_ns}"


def read_part_hashes(output_dir: str) -> dict[str, str]:
    """The PART_HASHES_FILE of ``output_dir`` (file_stamp -> sha256); empty when it has none or it is not
    readable JSON."""
    try:
        with open(os.path.join(output_dir, PART_HASHES_FILE), encoding="utf-8") as handle:
            known = json.load(handle)
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def write_part_hashes(staging: str, hashes: dict[str, str]) -> None:
    """Write PART_HASHES_FILE into the staging folder (published with the outputs)."""
    with open(os.path.join(staging, PART_HASHES_FILE), "w", encoding="utf-8") as handle:
        json.dump(hashes, handle, indent=0, sort_keys=True)


def parts_glob(folder: str) -> str:
    """The glob of the parts of ``folder``."""
    return os.path.join(folder, PART_PREFIX + "*.parquet")


def drop_empty_part(path: str) -> str:
    """Remove the part at ``path`` when it holds no row (a build that changed nothing adds no part)."""
    if os.path.exists(path) and pq.read_metadata(path).num_rows == 0:
        os.remove(path)
        return "no change"
    return path


def key_list(key: str) -> list[str]:
    """The key columns of ``key`` (comma-separated)."""
    return [column.strip() for column in key.split(",") if column.strip()]


def current_rows_sql(folder: str, key: str) -> str:
    """DuckDB SQL for the current rows of a folder of parts (its output's columns, in no set order).

    The newest part of each key is found from the narrow columns; only those rows are read whole."""
    columns = f"parts.* exclude ({CHANGE_COLUMN}, {HASH_COLUMN}, {FILE_COLUMN})"
    return f"{_newest_rows_sql(folder, key, columns)} where parts.{CHANGE_COLUMN} = 'upsert'"


def published_hashes_sql(folder: str, key: str) -> str:
    """DuckDB SQL for the newest version of each key in a folder of parts, narrow: the key columns,
    part_change and part_row_hash (what a build compares its rows with; export_parts)."""
    return _newest_rows_sql(folder, key, f"{', '.join(key_list(key))}, {CHANGE_COLUMN}, {HASH_COLUMN}")


def _newest_rows_sql(folder: str, key: str, columns: str) -> str:
    """``columns`` of each key's row in the newest part that holds the key (alias ``parts``)."""
    pattern = parts_glob(folder).replace("'", "''")
    source = f"read_parquet('{pattern}', filename = '{FILE_COLUMN}', union_by_name = true)"
    keys = ", ".join(key_list(key))
    return (
        f"with newest as (select {keys}, max({FILE_COLUMN}) as {FILE_COLUMN} from {source} group by {keys}) "
        f"select {columns} "
        f"from {source} as parts semi join newest using ({keys}, {FILE_COLUMN})"
    )
