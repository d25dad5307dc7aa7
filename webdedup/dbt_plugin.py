"""dbt-duckdb plugin: file-system helpers the SQL layer cannot express (DuckDB has no mkdir or rename).

Registered in profiles.yml (``plugins: [{module: webdedup.dbt_plugin}]``).  It adds scalar functions
to every dbt connection:

* ``webdedup_prepare_dir(path)`` creates the folder if needed and returns its absolute path;
* ``webdedup_publish_outputs(staging_dir, output_dir)`` moves a successful run's staged output files
  into place (``os.replace`` each, manifest.json last) and ``webdedup_discard_dir(path)`` drops the
  staging folder of a run that failed, so the output folder only ever holds complete runs;
* ``webdedup_write_text(path, text)`` writes a text file (the SVG pictures, into the staging folder) and
  ``webdedup_publish_file(path, target_dir)`` copies a published file to another folder under a
  temporary name and renames it into place (the pictures, into the docs asset folder);
* ``webdedup_publish_database(build_path, publish_dir)`` copies the (checkpointed) build database to
  ``publish_dir`` under a temporary name and renames it into place, so analysts' read-only connections
  never block the build and never see a half-built database.

And one function for ad-hoc questions (``dbt run-operation explain_pair``):

* ``webdedup_shingle_set(body, shingle_size)``: the document's shingle set (sorted distinct 64-bit
  shingle hashes, exactly as int_shingle_sets stores them; webdedup.fingerprint.shingle_set_batch).

And the intersection count of exact Jaccard on DuckDB (macros/exact_jaccard.sql):

* ``webdedup_shared_shingles(left_set, right_set)``: how many hashes two sorted shingle sets share, a
  merge per row in compiled code (webdedup.fingerprint.shared_shingle_counts), vectorized over Arrow.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shutil

from dbt.adapters.duckdb.credentials import Attachment
from dbt.adapters.duckdb.plugins import BasePlugin


def prepare_dir(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def write_text(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return os.path.abspath(path)


def publish_file(path: str, target_dir: str) -> str:
    """Copy path into target_dir under a temporary name, then rename it into place; returns the target."""
    source = os.path.abspath(path)
    target = os.path.join(os.path.abspath(target_dir), os.path.basename(source))
    if target == source:
        return f"{target} (already in place)"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temporary = f"{target}.{os.getpid()}.tmp"
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)
    return target


def publish_database(build_path: str, publish_dir: str) -> str:
    published = publish_file(build_path, publish_dir)
    return published.replace("(already in place)", "(built in place)")


def publish_outputs(staging_dir: str, output_dir: str) -> str:
    """Move a successful run's staged files into output_dir (manifest.json last); drop staging folders."""
    if not os.path.isdir(staging_dir):
        return "nothing staged"
    names = sorted(os.listdir(staging_dir), key=lambda name: (name == "manifest.json", name))
    for name in names:
        os.replace(os.path.join(staging_dir, name), os.path.join(output_dir, name))
    for leftover in glob.glob(os.path.join(output_dir, ".staging-*")):
        shutil.rmtree(leftover, ignore_errors=True)
    return f"published {len(names)} file(s) to {os.path.abspath(output_dir)}"


def shingle_set(body: str | None, shingle_size: int) -> list[int]:
    import pyarrow as pa

    from webdedup.fingerprint import FingerprintParams, shingle_set_batch

    batch = pa.record_batch({"doc_id": ["-"], "body": pa.array([body], pa.string())})
    params = FingerprintParams(shingle_size=int(shingle_size))
    return shingle_set_batch(batch, params).column("shingle_set")[0].as_py()


def shared_shingles(left, right):
    """Vectorized (Arrow) UDF: per row, the size of the intersection of two sorted shingle sets."""
    from webdedup.fingerprint import shared_shingle_counts

    return shared_shingle_counts(left, right)


def discard_dir(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    return f"discarded {path}"


def _quote_attach_aliases() -> None:
    """profiles.yml attaches the build file (DEDUP_DB_PATH) under its stem, the name DuckDB gives a file
    it opens, so that the views in the published copy resolve.  dbt-duckdb 1.11 writes
    ``ATTACH '<path>' AS <alias>`` with the alias unquoted, which makes a file named like
    ``my-crawl.duckdb`` or ``default.duckdb`` a syntax error; this quotes it (the rest of the statement
    stays dbt-duckdb's).  Runs when dbt-duckdb loads this plugin, before it opens the database."""
    if getattr(Attachment.to_sql, "quotes_alias", False):
        return
    unquoted_to_sql = Attachment.to_sql

    def to_sql(self) -> str:
        if not self.alias or self.alias.startswith('"'):
            return unquoted_to_sql(self)
        return unquoted_to_sql(dataclasses.replace(self, alias='"' + self.alias.replace('"', '""') + '"'))

    to_sql.quotes_alias = True
    Attachment.to_sql = to_sql


_quote_attach_aliases()


class Plugin(BasePlugin):
    def update_connection_config(self, creds, config: dict) -> None:
        """DuckDB's memory limit: DEDUP_MEMORY_LIMIT, else a share of this machine's (webdedup.memory)."""
        from webdedup.memory import memory_limit

        config.setdefault("memory_limit", memory_limit())

    def configure_connection(self, conn) -> None:
        file_helpers = (prepare_dir, write_text, publish_file, publish_database, publish_outputs, discard_dir)
        functions = [
            (
                f"webdedup_{func.__name__}",
                func,
                ["VARCHAR"] * func.__code__.co_argcount,
                "VARCHAR",
                {"side_effects": True},
            )
            for func in file_helpers
        ]
        # a null body is an empty document (no shingles), as in the pipeline
        options = {"null_handling": "special"}
        functions.append(("webdedup_shingle_set", shingle_set, ["VARCHAR", "BIGINT"], "BIGINT[]", options))
        functions.append(
            (
                "webdedup_shared_shingles",
                shared_shingles,
                ["BIGINT[]", "BIGINT[]"],
                "BIGINT",
                {"type": "arrow", "null_handling": "special"},
            )
        )
        for name, func, parameters, result, options in functions:
            try:
                conn.create_function(name, func, parameters, result, **options)
            except Exception as exc:  # already registered on this connection
                if "already exists" not in str(exc):
                    raise
