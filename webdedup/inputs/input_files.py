"""Which files ``documents_path`` names, and what is wrong with one before DuckDB reads it.

* :func:`list_documents_files`: a file, a folder (searched recursively) or a glob, to one kind (CSV or
  Parquet) and a sorted list of files.  File kinds are told by suffix in any case (``.csv``, ``.csv.gz``,
  ``.tsv``, ``.tsv.gz``; ``.parquet``, ``.pq``), so a folder reads exactly the files one of them names,
  and nothing is skipped silently: a file of another kind in a folder, or a folder mixing CSV and
  Parquet, is a problem naming the files.  Names starting with ``.`` or ``_`` are skipped as Spark and
  Hadoop write them (``_SUCCESS``, ``.part-0.crc``); a folder that a glob matches is read like a folder.
* :func:`file_version`: a file's size and modification time, the version that says a build need not read it
  again (stg_documents' input_read_key, the WARC reader's read keys).
* :func:`csv_problem` and :func:`parquet_problem`: a file DuckDB would read without an error but wrongly:
  an empty CSV file, two columns of the same name, whatever their case (DuckDB renames the second
  ``body_1``, so the body would be read as empty, or from the other column), and CSV rows that the
  header's delimiter does not split into the header's fields (DuckDB's sniffer then reads the whole line
  as one column).

The manifest's input files (webdedup/outputs/manifest.py) are this list, so they are the files read.
"""

from __future__ import annotations

import collections
import csv
import glob
import io
import json
import os
import string
import sys

from webdedup.inputs.csv_files import open_bytes

TSV_SUFFIXES = (".tsv", ".tsv.gz")
CSV_SUFFIXES = (".csv", ".csv.gz", *TSV_SUFFIXES)
PARQUET_SUFFIXES = (".parquet", ".pq")
MAX_NAMED_FILES = 5
#: what a CSV row that does not split like its header usually lacks
_QUOTING = ' (a field holding the delimiter, a quote or a newline must be in ", a quote inside doubled)'


def kind_of(path: str) -> str | None:
    """csv, parquet or None, from the file name's suffix in any case."""
    name = path.lower()
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def _skipped(name: str) -> bool:
    return name.startswith((".", "_"))


def _folder_files(folder: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not _skipped(d)]
        found += [os.path.join(root, f) for f in files if not _skipped(f)]
    return found


def _named(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_NAMED_FILES])
    return shown + (f" (and {len(paths) - MAX_NAMED_FILES} more)" if len(paths) > MAX_NAMED_FILES else "")


def file_version(path: str) -> str:
    """What tells a file's versions apart without reading it: its size and modification time (ns)."""
    status = os.stat(path)
    return f"size={status.st_size} mtime_ns={status.st_mtime_ns}"


def file_key(path: str) -> str:
    """A file as a build reads it: its absolute path and file_version."""
    return f"file {os.path.abspath(path)} {file_version(path)}"


def list_documents_files(path: str) -> dict:
    """{"kind": "csv" | "parquet", "files": [...]} or {"problem": "<one line>"} for documents_path."""
    label = f"documents_path '{path}'"
    if os.path.isfile(path):
        if kind_of(path) is None:
            return {"problem": f"{label} is not a CSV (.csv, .csv.gz, .tsv) or Parquet (.parquet, .pq) file"}
        return {"kind": kind_of(path), "files": [path]}
    if os.path.isdir(path):
        found = _folder_files(path)
        where = f"{label} (a folder)"
    elif glob.has_magic(path):
        found = []
        for match in glob.glob(path, recursive=True):
            found += _folder_files(match) if os.path.isdir(match) else [match]
        if not found:
            return {"problem": f"{label}: no files match the glob"}
        where = f"{label} (a glob)"
    else:
        return {"problem": f"{label}: no such file or folder"}
    by_kind = collections.defaultdict(list)
    for file in sorted(found):
        by_kind[kind_of(file)].append(file)
    if by_kind[None]:
        return {
            "problem": f"{where} holds file(s) that are neither CSV nor Parquet: {_named(by_kind[None])}; "
            "name the files to read with a glob such as '*.parquet'"
        }
    if by_kind["csv"] and by_kind["parquet"]:
        return {
            "problem": f"{label} holds both Parquet ({len(by_kind['parquet'])}) and CSV "
            f"({len(by_kind['csv'])}) files: name the ones to read with a glob such as "
            f"'{path.rstrip('/')}/**/*.parquet'"
        }
    kind = "parquet" if by_kind["parquet"] else "csv"
    if not by_kind[kind]:
        return {"problem": f"{where} holds no CSV or Parquet files"}
    return {"kind": kind, "files": by_kind[kind]}


def documents_files_json(path: str) -> str:
    """list_documents_files as JSON, with "file_keys": [file_key of each file] (the webdedup_documents_files
    SQL function)."""
    listed = list_documents_files(path)
    if "files" in listed:
        listed["file_keys"] = [file_key(file) for file in listed["files"]]
    return json.dumps(listed)


def _text(path: str):
    return io.TextIOWrapper(open_bytes(path), encoding="utf-8-sig", errors="replace", newline="")


def _delimiter(path: str, first_line: str) -> str:
    """The header's delimiter: a tab for .tsv, else the most frequent of , ; tab | in the header line."""
    if path.lower().endswith(TSV_SUFFIXES):
        return "\t"
    return max([",", ";", "\t", "|"], key=first_line.count)


#: DuckDB matches column names case-insensitively in ASCII only ('BODY' is 'body', 'É' is not 'é')
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _duplicates(names: list[str]) -> str:
    """'' or the problem of column names that DuckDB takes for one name (equal but for ASCII case): it
    renames all but the first (``body_1``), so which one is read as the body would depend on their order."""
    groups = collections.defaultdict(list)
    for name in names:
        groups[name.translate(_ASCII_LOWER)].append(name)
    repeated = [list(dict.fromkeys(group)) for group in groups.values() if len(group) > 1]
    if not repeated:
        return ""
    folded = any(len(spellings) > 1 for spellings in repeated)
    repeated = [" and ".join(repr(name) for name in spellings) for spellings in repeated]
    return (
        f"has two or more columns named {', '.join(repeated)}"
        + (" (DuckDB reads column names whatever their case)" if folded else "")
        + ": rename or drop them"
    )


def csv_problem(path: str, columns_read: int) -> str:
    """The one-line problem of a CSV file ('' when none).  columns_read: how many columns DuckDB read;
    fewer than the header holds means rows that do not split like the header, which are then found
    (Python's csv module: a pass over the file on that error path only)."""
    csv.field_size_limit(sys.maxsize)
    with _text(path) as handle:
        first_line = handle.readline()
        if not first_line.strip():
            return "is empty: it has no header row"
        delimiter = _delimiter(path, first_line)
        handle.seek(0)
        # .csv: RFC 4180, as DuckDB reads it; TSV as it is mostly written, without quoting
        quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
        reader = csv.reader(handle, delimiter=delimiter, quotechar='"', quoting=quoting, strict=False)
        header = next(reader)
        if _duplicates(header):
            return _duplicates(header)
        if columns_read >= len(header):
            return ""
        for number, row in enumerate(reader, start=1):
            if len(row) != len(header) and row != []:
                return (
                    f"row {number} (line {reader.line_num}) has {len(row)} field(s) where the header has "
                    f"{len(header)}, split at {delimiter!r}{'' if quoting == csv.QUOTE_NONE else _QUOTING}: "
                    f"{delimiter.join(row)[:60]!r}"
                )
    return ""


def parquet_problem(path: str) -> str:
    """The one-line problem of a Parquet file ('' when none): top-level columns of the same name."""
    import pyarrow.parquet as pq

    return _duplicates(pq.read_schema(path).names)


def input_file_problem(path: str, columns_read: int) -> str:
    """csv_problem or parquet_problem by the file's kind (the webdedup_input_file_problem SQL function)."""
    return parquet_problem(path) if kind_of(path) == "parquet" else csv_problem(path, columns_read)
