"""Pinned byte ranges: the ranges table (Common Crawl index columns) and reading its rows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from webdedup.warc.records import rows_from_member
from webdedup.warc.reuse import ReadUnit
from webdedup.warc.schema import READ_FAILURE, WarcInputError, error_row
from webdedup.warc.sources import read_range

RANGE_COLUMNS = {
    "filename": ("warc_filename", "filename"),
    "offset": ("warc_record_offset", "offset"),
    "length": ("warc_record_length", "length"),
}


def read_ranges_table(path: str) -> list[tuple[int, str, int, int]]:
    """(table row, filename, offset, length) of a CSV or Parquet ranges table (Common Crawl index columns
    warc_filename, warc_record_offset, warc_record_length; or filename, offset, length)."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    if not os.path.isfile(path):
        raise WarcInputError(f"warc_ranges_path '{path}': no such file")
    lowered = path.lower()
    if lowered.endswith((".parquet", ".pq")):
        table = pq.read_table(path)
    elif lowered.endswith((".csv", ".csv.gz")):
        table = pacsv.read_csv(
            path, convert_options=pacsv.ConvertOptions(column_types={}, strings_can_be_null=False)
        )
    else:
        raise WarcInputError(f"warc_ranges_path '{path}' is not a .csv or .parquet file")
    names = {name.lower(): name for name in table.column_names}
    chosen = {}
    for key, candidates in RANGE_COLUMNS.items():
        match = next((names[c] for c in candidates if c in names), None)
        if match is None:
            raise WarcInputError(
                f"warc_ranges_path '{path}' is missing required column {' or '.join(candidates)}"
                f" (found: {', '.join(table.column_names)})"
            )
        chosen[key] = table.column(match).to_pylist()
    ranges = []
    for number, (filename, offset, length) in enumerate(
        zip(chosen["filename"], chosen["offset"], chosen["length"], strict=True), start=1
    ):
        problem = None
        try:
            offset_value, length_value = int(str(offset).strip()), int(str(length).strip())
        except (TypeError, ValueError):
            problem = f"offset {offset!r} and length {length!r} must be integers"
        else:
            if offset_value < 0 or length_value <= 0:
                problem = f"offset {offset_value} must be >= 0 and length {length_value} > 0"
        if not problem and (filename is None or not str(filename).strip()):
            problem = "empty filename"
        if problem:
            raise WarcInputError(f"warc_ranges_path '{path}' row {number}: {problem}")
        ranges.append((number, str(filename).strip(), offset_value, length_value))
    return ranges


def iter_range_rows(units: list[ReadUnit], workers: int = 8) -> Iterator[list[dict]]:
    """Rows of every byte-range unit, in order; ranges are fetched by ``workers`` threads."""

    def fetch(unit: ReadUnit) -> list[dict]:
        filename, offset, length = unit.filename, unit.offset, unit.length
        try:
            raw = read_range(unit.location, offset, length)
        except Exception as exc:  # a range that cannot be read is an error row
            return [error_row(filename, offset, length, f"{READ_FAILURE}: {type(exc).__name__}: {exc}")]
        return rows_from_member(raw, filename, offset, length)

    if workers <= 1:
        yield from map(fetch, units)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(fetch, units)
