"""The run manifest: what went in, with which settings, what came out (content hashes), with what.

Built by the ``run_manifest`` dbt Python model after every output file is published; written to
``manifest.json`` by the same export hook as the other outputs.  Only ``generated_at``
changes between two runs on the same input; everything else is a pure function of the
input, the settings and the package versions.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import os
import platform
from importlib import metadata

from webdedup.pictures import PICTURES

TABLE_FILES = (
    "fingerprinted.parquet",
    "candidate_summary.csv",
    "scored_pairs.parquet",
    "duplicate_pairs.csv",
    "clusters.csv",
    "cluster_inspection.csv",
    "deduped_documents.parquet",
)
# The SVG pictures of lsh_pictures are outputs too (hashed, no row count).
OUTPUT_FILES = (*TABLE_FILES, *(file_name for _, file_name in PICTURES))
PACKAGES = ("dbt-core", "dbt-duckdb", "duckdb", "pyarrow", "numpy", "dbt-spark", "pyspark")


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def input_files(
    documents_path: str, seed_path: str, warc_paths: str = "", warc_ranges_path: str = ""
) -> list[str]:
    """The files the documents were read from, sorted (a file, a glob or a folder).

    WARC input: the local WARC files and the ranges table (the ranges pin the remote bytes it reads).
    """
    if warc_paths or warc_ranges_path:
        from webdedup.warc import list_warc_files

        found = [path for path, _ in list_warc_files(warc_paths)] if warc_paths else []
        return sorted(found + ([warc_ranges_path] if warc_ranges_path else []))
    if not documents_path:
        return [seed_path]
    if os.path.isdir(documents_path):
        found = [
            p
            for ext in ("parquet", "csv")
            for p in glob.glob(os.path.join(documents_path, "**", f"*.{ext}"), recursive=True)
        ]
    else:
        found = glob.glob(documents_path, recursive=True)
    return sorted(found)


def input_digest(files: list[str]) -> str:
    """One sha256 over the input files' names (basename) and contents, in sorted order."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(os.path.basename(path).encode("utf-8") + b"\0" + sha256_file(path).encode("ascii"))
    return digest.hexdigest()


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
    settings: dict,
    summary: dict,
    source_counts: dict[str, int],
    output_dir: str,
    documents_path: str,
    seed_path: str,
    row_counts: dict[str, int],
    engine: str,
    warc_paths: str = "",
    warc_ranges_path: str = "",
) -> dict:
    files = input_files(documents_path, seed_path, warc_paths, warc_ranges_path)
    if warc_paths or warc_ranges_path:
        classification = "warc_paths" if warc_paths else "warc_ranges_path"
    else:
        classification = "documents_path" if documents_path else "seed_fixture"
    outputs = []
    for name in OUTPUT_FILES:
        path = os.path.join(output_dir, name)
        outputs.append(
            {
                "file": name,
                "rows": int(row_counts[name]) if name in row_counts else None,
                "sha256": sha256_file(path) if os.path.exists(path) else None,
            }
        )
    return {
        "pipeline": "web_text_dedup",
        "generated_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "source": {
            "classification": classification,
            "documents_path": documents_path or None,
            "warc_paths": warc_paths or None,
            "warc_ranges_path": warc_ranges_path or None,
            "input_files": [os.path.basename(p) for p in files],
            "input_sha256": input_digest(files),
            "documents_by_source": [
                {"source": k, "documents": int(v)} for k, v in sorted(source_counts.items())
            ],
        },
        "settings": {k: settings[k] for k in sorted(settings)},
        "counts": {k: summary[k] for k in summary},
        "outputs": outputs,
        "versions": package_versions(),
        "backends": {
            "engine": engine,
            "fingerprints": "webdedup.fingerprint (numpy + pyarrow, streamed record batches)"
            + (" via mapInArrow" if engine == "spark" else ""),
            "candidates": "global band self-join over distinct shingle sets",
            "scoring": "exact shingle-hash Jaccard (equi-join)",
            "components": "min-label propagation with pointer jumping (one query per round)"
            if engine == "spark"
            else "min-label propagation (recursive CTE)",
        },
    }
