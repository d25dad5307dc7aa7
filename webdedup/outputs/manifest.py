"""The run manifest: what went in, with which settings, what came out (content hashes), with what.

Built by the ``run_manifest`` dbt Python model after every other output file is staged; written to
``manifest.json`` by the same export hook as the other outputs.  The input files are hashed by the
``int_input_files`` model (``input_file_rows``), which needs only the settings, so dbt runs it at the start,
beside staging, rather than after every other stage.  Only ``generated_at`` changes between
two runs on the same input; everything else is a pure function of the input, the settings, the code and
the package versions.  Nothing in it is free prose: the settings are the int_run_settings row, the
output files are those of var output_files (dbt_project.yml) and lsh_pictures, and "backends" names the
function and the dispatched macros that ran.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata

import pyarrow as pa

from webdedup.inputs.input_files import file_key, list_documents_files
from webdedup.outputs.parts import file_stamp, holds_history, read_part_hashes, write_part_hashes

#: The settings-row columns that name the input (reported under "source"), where outputs go (not reported:
#: they are machine paths) and what ran (reported under "backends"); every other column is a setting.
INPUT_KEYS = ("documents_path", "warc_paths", "warc_ranges_path")
LOCATION_KEYS = ("output_dir", "staging_dir")
IMPLEMENTATION_SUFFIX = "_implementation"
PACKAGES = ("dbt-core", "dbt-duckdb", "duckdb", "pyarrow", "numpy", "dbt-spark", "pyspark")
#: The int_input_files columns (``input_file_rows``; Spark converts this schema).
INPUT_FILE_SCHEMA = pa.schema(
    [
        ("input_order", pa.int32()),
        ("input_file", pa.string()),
        ("bytes", pa.int64()),
        ("sha256", pa.string()),
        ("file_key", pa.string()),
    ]
)
#: Where the checked-in seed is, relative to the project root (the input when no input var is set).
SEED_PATH = "seeds/documents.csv"


def sha256_file(path: str) -> str:
    """The sha256 of a file; of a folder of part files, the sha256 of its files' names and sha256s."""
    if os.path.isdir(path):
        return named_digest(folder_hashes(path))
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def folder_hashes(
    folder: str, known: dict | None = None, stamps: dict | None = None
) -> list[tuple[str, str]]:
    """(name, sha256) of every file of ``folder``, by name.  ``known`` maps file stamps (parts.file_stamp:
    inode, size, modification time) to sha256s: a file whose stamp it holds is not read again; ``stamps``
    receives the stamp and sha256 of every file."""
    hashes = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        stamp = file_stamp(path)
        sha256 = (known or {}).get(stamp) or sha256_file(path)
        if stamps is not None:
            stamps[stamp] = sha256
        hashes.append((name, sha256))
    return hashes


def input_files(
    documents_path: str, seed_path: str, warc_paths: str = "", warc_ranges_path: str = ""
) -> list[str]:
    """The files the documents were read from, sorted (a file, a glob or a folder).

    WARC input: the local WARC files and the ranges table (the ranges pin the remote bytes it reads).
    """
    if warc_paths or warc_ranges_path:
        from webdedup.warc.sources import list_warc_files

        found = [path for path, _ in list_warc_files(warc_paths)] if warc_paths else []
        return sorted(found + ([warc_ranges_path] if warc_ranges_path else []))
    if not documents_path:
        return [seed_path]
    return sorted(list_documents_files(documents_path).get("files", []))


def input_digest(files: list[str]) -> str:
    """One sha256 over the input files' names (basename) and contents, in sorted order."""
    return named_digest((os.path.basename(path), sha256_file(path)) for path in files)


def named_digest(named_hashes) -> str:
    """One sha256 over (file name, sha256) pairs, in the order given."""
    digest = hashlib.sha256()
    for name, file_hash in named_hashes:
        digest.update(name.encode("utf-8") + b"\0" + file_hash.encode("ascii"))
    return digest.hexdigest()


def input_file_rows(settings_row: dict, known: dict[str, str] | None = None) -> list[dict]:
    """The files the run's input settings (an int_run_settings row) name, in sorted path order: per file
    its place in that order, name (basename), size, sha256 and file_key (a file's path, size and
    modification time; null for a folder).  ``known`` maps the file_keys of an earlier build to their
    sha256: a file with the same key is not read again (the rule stg_documents follows); the others are
    hashed on two threads (hashlib releases the GIL)."""
    inputs = {key: settings_row.get(key) or "" for key in INPUT_KEYS}
    files = input_files(inputs["documents_path"], SEED_PATH, inputs["warc_paths"], inputs["warc_ranges_path"])
    keys = [file_key(path) if os.path.isfile(path) else None for path in files]
    known = known or {}
    with ThreadPoolExecutor(2) as pool:
        hashes = list(pool.map(lambda path, key: known.get(key) or sha256_file(path), files, keys))
    return [
        {
            "input_order": order,
            "input_file": os.path.basename(path),
            "bytes": os.path.getsize(path),
            "sha256": h,
            "file_key": key,
        }
        for order, (path, h, key) in enumerate(zip(files, hashes, keys, strict=True))
    ]


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def build_manifest(
    *,
    settings_row: dict,
    summary: dict,
    source_counts: dict[str, int],
    outputs: list[tuple[str, int | None]],
    input_rows: list[dict],
    engine: str,
    fingerprints: str,
) -> dict:
    """The manifest of a run: ``settings_row`` is the int_run_settings row, ``summary`` the
    candidate_summary row, ``outputs`` the (file, rows or None) of every output in the staging folder,
    ``input_rows`` the int_input_files rows (``input_file_rows``, in input_order), ``fingerprints`` the
    qualified name of the fingerprint function that ran."""
    inputs = {key: settings_row.get(key) or "" for key in INPUT_KEYS}
    staging = settings_row["staging_dir"]
    if inputs["warc_paths"] or inputs["warc_ranges_path"]:
        classification = "warc_paths" if inputs["warc_paths"] else "warc_ranges_path"
    else:
        classification = "documents_path" if inputs["documents_path"] else "seed_fixture"
    settings = {
        key: value
        for key, value in settings_row.items()
        if key not in INPUT_KEYS + LOCATION_KEYS and not key.endswith(IMPLEMENTATION_SUFFIX)
    }
    implementations = {
        key.removesuffix(IMPLEMENTATION_SUFFIX): value
        for key, value in settings_row.items()
        if key.endswith(IMPLEMENTATION_SUFFIX)
    }
    known = read_part_hashes(settings_row["output_dir"]) if settings_row.get("output_dir") else {}
    stamps: dict[str, str] = {}
    hashes = {name: _staged_sha256(os.path.join(staging, name), known, stamps) for name, _ in outputs}
    if stamps:
        write_part_hashes(staging, stamps)
    return {
        "pipeline": "web_text_dedup",
        "generated_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "source": {
            "classification": classification,
            **{key: value or None for key, value in inputs.items()},
            "input_files": [row["input_file"] for row in input_rows],
            "input_sha256": named_digest((row["input_file"], row["sha256"]) for row in input_rows),
            "documents_by_source": [
                {"source": k, "documents": int(v)}
                for k, v in sorted(source_counts.items(), key=lambda item: (item[0] is None, item[0] or ""))
            ],
        },
        "settings": {k: settings[k] for k in sorted(settings)},
        "counts": {k: summary[k] for k in summary},
        "outputs": [
            {
                "file": name,
                "rows": None if rows is None else int(rows),
                "sha256": hashes[name],
            }
            for name, rows in outputs
        ],
        "versions": package_versions(),
        "backends": {"engine": engine, "fingerprints": fingerprints, **dict(sorted(implementations.items()))},
    }


def _staged_sha256(path: str, known: dict, stamps: dict) -> str | None:
    """The sha256 of a staged output (None when it was not written).  Of a folder of parts that an
    incremental build adds to, the parts' hashes come from ``known`` where their stamps match, and go to
    ``stamps`` (parts.PART_HASHES_FILE)."""
    if os.path.isdir(path):
        if holds_history(path, []):
            return named_digest(folder_hashes(path, known, stamps))
        return named_digest(folder_hashes(path))
    return sha256_file(path) if os.path.exists(path) else None
