"""The one registry of the ``webdedup_*`` SQL functions that the macros call.

Each entry names the SQL function, the Python function behind it, its argument and return types and the
engines that register it.  ``engines/duckdb_plugin.py`` (dbt-duckdb) and ``engines/spark_session.py``
(dbt-spark) register every entry for their engine from here; ``tests/python/unit/test_udf_registry.py``
fails when a macro that runs on an engine calls a ``webdedup_*`` function not registered for it, and
``docs/udfs.md`` (what `dbt docs` shows) is generated from this table: ``python -m webdedup.engines.udfs``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow.compute as pc

from webdedup.core import fingerprint, ratios
from webdedup.engines import anchor_scoring, duckdb_memory
from webdedup.inputs import csv_files, input_files
from webdedup.outputs import files, guards, numbers, parts, row_groups

DUCKDB, SPARK = "duckdb", "spark"
BOTH = frozenset({DUCKDB, SPARK})

#: Argument and return types by engine (DuckDB type names; Spark DDL type strings).
TYPES = {
    "text": {DUCKDB: "VARCHAR", SPARK: "string"},
    "boolean": {DUCKDB: "BOOLEAN", SPARK: "boolean"},
    "bigint": {DUCKDB: "BIGINT", SPARK: "bigint"},
    "bigint[]": {DUCKDB: "BIGINT[]", SPARK: "array<bigint>"},
    "blob": {DUCKDB: "BLOB", SPARK: "binary"},
    "bigint[][]": {DUCKDB: "BIGINT[][]", SPARK: "array<array<bigint>>"},
    "double": {DUCKDB: "DOUBLE", SPARK: "double"},
    # exact_jaccard's pairs and their counts (DuckDB only)
    "pairs": {DUCKDB: "STRUCT(low_doc_id VARCHAR, high_doc_id VARCHAR)[]"},
    "pair counts": {
        DUCKDB: "STRUCT(low_doc_id VARCHAR, high_doc_id VARCHAR, both_counts BIGINT, "
        "shared_shingles BIGINT)[]"
    },
}


@dataclass(frozen=True)
class Udf:
    name: str
    function: Callable
    arguments: tuple[tuple[str, str], ...]  # (name, type) with types from TYPES
    returns: str
    engines: frozenset[str]
    description: str
    side_effects: bool = False  # DuckDB must call it for every row, never fold or cache it
    vectorized: bool = False  # DuckDB: an Arrow function over whole columns
    takes_nulls: bool = False  # DuckDB: called with NULL arguments instead of returning NULL
    takes_connection: bool = False  # DuckDB: the function's first argument is the database's connection
    arrow_function: Callable | None = None  # DuckDB: called instead of ``function``, over whole Arrow columns

    def sql_types(self, engine: str) -> tuple[list[str], str]:
        return [TYPES[kind][engine] for _, kind in self.arguments], TYPES[self.returns][engine]


def _shingle_set(body: str | None, shingle_size: int) -> list[int]:
    return fingerprint.shingle_set(body, int(shingle_size))


def _shingle_sets(bodies, shingle_sizes):
    sizes = pc.unique(shingle_sizes).to_pylist()
    if len(sizes) != 1 or sizes[0] is None:
        raise ValueError(f"webdedup_shingle_set: one shingle_size per query, got {sizes}")
    return fingerprint.shingle_set_array(bodies, int(sizes[0]))


def _staging_dir(output_dir: str, invocation_id: str, create: bool) -> str:
    path = files.staging_dir(output_dir, invocation_id)
    return files.prepare_dir(path) if create else os.path.abspath(path)


def _shared_shingles(left, right):
    return fingerprint.shared_shingle_counts(left, right)


UDFS = (
    Udf(
        "webdedup_prepare_dir",
        files.prepare_dir,
        (("path", "text"),),
        "text",
        BOTH,
        "Creates the folder if needed and returns its absolute path.",
        side_effects=True,
    ),
    Udf(
        "webdedup_staging_dir",
        _staging_dir,
        (("output_dir", "text"), ("invocation_id", "text"), ("create", "boolean")),
        "text",
        BOTH,
        "This run's staging folder inside output_dir (absolute), created when create is true.",
        side_effects=True,
    ),
    Udf(
        "webdedup_path_kind",
        files.path_kind,
        (("path", "text"),),
        "text",
        BOTH,
        "'file', 'folder' or '' (missing): whether output_dir holds a published output (the changelog's "
        "previous release).",
        side_effects=True,
    ),
    Udf(
        "webdedup_write_text",
        files.write_text,
        (("path", "text"), ("text", "text")),
        "text",
        BOTH,
        "Writes a text file (the SVG pictures into the staging folder); returns its absolute path.",
        side_effects=True,
    ),
    Udf(
        "webdedup_publish_outputs",
        files.publish_outputs,
        (("staging", "text"), ("output_dir", "text")),
        "text",
        BOTH,
        "Moves a successful run's staged files into output_dir (manifest.json last) and drops staging "
        "folders.",
        side_effects=True,
    ),
    Udf(
        "webdedup_discard_dir",
        files.discard_dir,
        (("path", "text"),),
        "text",
        BOTH,
        "Drops the staging folder of a run that failed.",
        side_effects=True,
    ),
    Udf(
        "webdedup_write_in_row_groups",
        row_groups.write_in_row_groups,
        (("query", "text"), ("path", "text"), ("rows", "bigint")),
        "text",
        frozenset({DUCKDB}),
        "Writes a query's rows to a zstd Parquet file (pyarrow's writer) in row groups of exactly `rows` "
        "rows but the last, whatever the physical layout of the tables it reads (the release, written in "
        "stored order without a sort).",
        side_effects=True,
        takes_connection=True,
    ),
    Udf(
        "webdedup_size_memory_for_text",
        duckdb_memory.size_for_text_vectors,
        (("vector_text_bytes", "bigint"), ("readers", "bigint")),
        "text",
        frozenset({DUCKDB}),
        "Raises DuckDB's derived memory limit to hold `readers` decompressed 2,048-row vectors of stored "
        "text at once (long pages); returns the line to log, empty when nothing changed.",
        side_effects=True,
        takes_connection=True,
    ),
    Udf(
        "webdedup_pair_intersections",
        anchor_scoring.pair_intersections,
        (
            ("pairs", "pairs"),
            ("texts", "text"),
            ("groups", "text"),
            ("settings", "text"),
            ("block_mb", "text"),
        ),
        "pair counts",
        frozenset({DUCKDB}),
        "exact_jaccard: the shared shingles and both set sizes of each pair, counted as "
        "int_anchor_intersections counts (a scratch file of sets, about block_mb of them in memory) over "
        "the texts of the named tables, read as committed; one call per query (the pairs as one list).",
        side_effects=True,
        takes_connection=True,
    ),
    Udf(
        "webdedup_publish_database",
        files.publish_database,
        (("build_path", "text"), ("publish_dir", "text")),
        "text",
        frozenset({DUCKDB}),
        "Publishes the checkpointed build database (attached read-only by then): a hard link renamed into "
        "place, a copy where the file system has none; readers never see half.",
        side_effects=True,
    ),
    Udf(
        "webdedup_stage_parts",
        parts.stage_parts,
        (("published", "text"), ("staged", "text"), ("key", "text"), ("compact", "boolean")),
        "text",
        frozenset({DUCKDB}),
        "var incremental_outputs: links an output's published parts into the run's staging folder and "
        "returns JSON naming the part this build writes (number 0: a new history, every row), its path "
        "and the staged parts' glob.",
        side_effects=True,
    ),
    Udf(
        "webdedup_drop_empty_part",
        parts.drop_empty_part,
        (("path", "text"),),
        "text",
        frozenset({DUCKDB}),
        "var incremental_outputs: removes a staged part that holds no row (a build that changed nothing adds "
        "no part).",
        side_effects=True,
    ),
    Udf(
        "webdedup_finalize_export",
        files.finalize_export,
        (("parts_dir", "text"), ("target", "text")),
        "text",
        frozenset({SPARK}),
        "Turns a Spark writer's output folder (one part file) into the single output file.",
        side_effects=True,
    ),
    Udf(
        "webdedup_finalize_parts",
        files.finalize_parts,
        (("parts_dir", "text"), ("target", "text")),
        "text",
        frozenset({SPARK}),
        "Turns a Spark writer's output folder into the output's folder of part files, named part-00000.<ext> "
        "on in row order.",
        side_effects=True,
    ),
    Udf(
        "webdedup_format_double",
        numbers.format_double,
        (("value", "double"),),
        "text",
        frozenset({SPARK}),
        "A double as DuckDB's CSV writer writes it (the shortest round-trip text): Spark's CSV exports.",
    ),
    Udf(
        "webdedup_shingle_set",
        _shingle_set,
        (("body", "text"), ("shingle_size", "bigint")),
        "bigint[]",
        BOTH,
        "A document's shingle set: sorted distinct 64-bit shingle hashes, as exact scoring uses them "
        "(explain_pair; on DuckDB computed over whole Arrow columns, for the sets that exact_jaccard reads "
        "and int_anchor_intersections does not store).",
        takes_nulls=True,
        arrow_function=_shingle_sets,
    ),
    Udf(
        "webdedup_mean_of_ratios",
        ratios.mean_of_ratios,
        (("ratios", "bigint[][]"),),
        "double",
        BOTH,
        "The exact mean of a list of [numerator, denominator] integer ratios (or [numerator_sum, "
        "denominator, count] for count ratios of one denominator), rounded once to a double: the same "
        "value whatever the list's order (cluster_mean_edge_jaccard).",
    ),
    Udf(
        "webdedup_shared_shingles",
        _shared_shingles,
        (("left_set", "bigint[]"), ("right_set", "bigint[]")),
        "bigint",
        frozenset({DUCKDB}),
        "How many hashes two sorted shingle sets share (the intersection of exact Jaccard), a compiled "
        "merge per row over Arrow columns.",
        vectorized=True,
        takes_nulls=True,
    ),
    Udf(
        "webdedup_signature_overlap",
        fingerprint.signature_overlaps,
        (("left_signature", "bigint[]"), ("right_signature", "bigint[]")),
        "double",
        frozenset({DUCKDB}),
        "The share of the left MinHash signature's positions at which the two signatures agree "
        "(scored_pairs' signature_overlap), one numpy comparison over Arrow columns.",
        vectorized=True,
        takes_nulls=True,
    ),
    Udf(
        "webdedup_csv_profile",
        csv_files.csv_profile,
        (("path", "text"), ("invalid_utf8", "text"), ("work_dir", "text")),
        "text",
        BOTH,
        "JSON about a CSV input file: DuckDB's max_line_size from its largest row, the rows holding bytes "
        "that are not UTF-8, or a repaired copy to read (var invalid_utf8).",
        side_effects=True,
    ),
    Udf(
        "webdedup_documents_files",
        input_files.documents_files_json,
        (("path", "text"),),
        "text",
        frozenset({DUCKDB}),
        "JSON: the kind (csv or parquet) and sorted files that documents_path names (a file, a folder or a "
        "glob) with each file's key (path, size, modification time: stg_documents.input_read_key), or the "
        "one-line problem (files of another kind in a folder, CSV mixed with Parquet, none).",
    ),
    Udf(
        "webdedup_input_file_problem",
        input_files.input_file_problem,
        (("path", "text"), ("columns_read", "bigint")),
        "text",
        frozenset({DUCKDB}),
        "Empty, or what DuckDB would read wrongly in an input file: an empty CSV, two columns of one name, "
        "CSV rows that do not split into the header's fields (columns_read: the columns DuckDB read).",
    ),
    Udf(
        "webdedup_decode_utf8_replace",
        csv_files.decode_utf8_replace,
        (("value", "blob"),),
        "text",
        BOTH,
        "A binary value as text, each invalid UTF-8 sequence replaced by U+FFFD (var invalid_utf8: replace).",
    ),
    Udf(
        "webdedup_claim_output_dir",
        guards.claim_output_dir,
        (("path", "text"),),
        "text",
        BOTH,
        "Empty when this build may write to output_dir (and now holds it), else the one-line problem.",
        side_effects=True,
    ),
    Udf(
        "webdedup_published_file_problem",
        guards.published_file_problem,
        (("build_path", "text"), ("publish_dir", "text")),
        "text",
        frozenset({DUCKDB}),
        "Empty when publishing may replace the published database, else the problem (another process "
        "holds it open for writing).",
        side_effects=True,
    ),
)


def for_engine(engine: str) -> tuple[Udf, ...]:
    return tuple(udf for udf in UDFS if engine in udf.engines)


def docs_markdown() -> str:
    """docs/udfs.md: a dbt docs block listing every function, generated from UDFS."""
    lines = [
        "{% docs webdedup_udfs %}",
        "",
        "SQL functions the macros call: Python functions registered on each dbt connection from",
        "`webdedup/engines/udfs.py`.  This page is generated from that table:",
        "`python -m webdedup.engines.udfs > docs/udfs.md`.",
        "",
        "| function | returns | engines | what it does |",
        "|---|---|---|---|",
    ]
    for udf in UDFS:
        signature = ", ".join(f"{name} {kind}" for name, kind in udf.arguments)
        engines = ", ".join(sorted(udf.engines))
        lines.append(f"| `{udf.name}({signature})` | {udf.returns} | {engines} | {udf.description} |")
    return "\n".join([*lines, "", "{% enddocs %}", ""])


if __name__ == "__main__":
    sys.stdout.write(docs_markdown())
