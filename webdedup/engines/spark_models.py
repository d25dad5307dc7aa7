"""The Python models on Spark: each function is one model's body, with the signature its DuckDB twin
(engines/duckdb_models.py) has.  A model passes its refs in as Spark DataFrames and gets one back.

* Fingerprints: ``mapInArrow`` over :func:`webdedup.core.fingerprint.fingerprint_batch`, the very
  function the DuckDB model streams its record batches through, so signatures are bit-identical across
  engines (each document's fingerprint depends on its own body only, not on how rows are batched).
  Spark builds are full builds: ``existing`` is ignored.
* Manifest and pictures: the same functions as on DuckDB, fed from collected DataFrames.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from webdedup import shipping
from webdedup.core.fingerprint import fingerprint_batch
from webdedup.core.stream import settings_from_row

#: Spark DDL of the int_fingerprints columns (FINGERPRINT_SCHEMA + body_hash, settings_key).
FINGERPRINT_DDL = (
    "doc_id string, token_count int, shingle_count int, shingle_set_key bigint, signature array<bigint>, "
    "band_keys array<bigint>, body_hash bigint, settings_key string"
)
#: Spark DDL of the int_shingle_sets columns (SHINGLE_SET_SCHEMA + body_hash, settings_key).
SHINGLE_SET_DDL = (
    "doc_id string, shingle_count int, shingle_set array<bigint>, body_hash bigint, settings_key string"
)
_CARRIED = ("body_hash", "settings_key")


def is_connect(spark: Any) -> bool:
    """True for a Spark Connect session (no SparkContext: the driver is the Connect server)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


_shipped: dict[str, str] = {}


def ship_package(spark: Any) -> None:
    """Off a local master, send the webdedup package to the executors, once per session: they import it
    from there, never from the driver's folder.  The archive (webdedup/shipping.py) carries the sources
    and numba's machine code for the kernels, compiled (or loaded) here first, so executors do not
    compile them again.  Spark Connect takes it as a session artifact; a classic driver through
    addPyFile."""
    key = spark.session_id if is_connect(spark) else f"classic-{spark.sparkContext.applicationId}"
    if key in _shipped:
        return
    if not is_connect(spark) and spark.sparkContext.master.startswith("local"):
        _shipped[key] = ""
        return
    from webdedup.core import warm

    warm.warm()  # the numba cache is current for these sources before it is shipped
    package = Path(__file__).resolve().parents[1]
    archive = shipping.build_archive(package, Path(tempfile.mkdtemp(prefix="webdedup-")) / "webdedup.zip")
    if is_connect(spark):
        spark.addArtifacts(str(archive), pyfile=True)
    else:
        spark.sparkContext.addPyFile(str(archive))
    _shipped[key] = str(archive)


def _map_batches(
    settings_df: Any, documents_df: Any, spark: Any, function_name: str, ddl: str, shingles_only: bool
):
    """mapInArrow of a webdedup.fingerprint batch function over (doc_id, body), with the body hash (from
    stg_documents) and the settings key carried along as on DuckDB (Spark builds are full builds, so
    they only keep the columns alike)."""
    from pyspark.sql import functions as F

    settings = settings_from_row(settings_df.first().asDict())
    params = settings.params
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(settings.batch_size))
    ship_package(spark)
    key = params.key(shingles_only=shingles_only)

    def partition(batches):
        from webdedup.core import fingerprint, stream

        function = getattr(fingerprint, function_name)
        for batch in batches:
            yield stream.carry_columns(function(batch, params), batch, _CARRIED)

    source = documents_df.select(
        "doc_id",
        "body",
        "body_hash",
        F.lit(key).alias("settings_key"),
    )
    return source.mapInArrow(partition, ddl)


def fingerprints(spark: Any, *, settings: Any, documents: Any, existing: str | None) -> Any:
    """int_fingerprints on Spark: a DataFrame of FINGERPRINT_DDL, one row per document."""
    return _map_batches(settings, documents, spark, "fingerprint_batch", FINGERPRINT_DDL, False)


def shingle_sets(spark: Any, *, settings: Any, documents: Any, existing: str | None) -> Any:
    """int_shingle_sets on Spark: a DataFrame of SHINGLE_SET_DDL for the documents given."""
    return _map_batches(settings, documents, spark, "shingle_set_batch", SHINGLE_SET_DDL, True)


def fingerprint_details(spark: Any, *, settings: Any, documents: Any) -> Any:
    """int_fingerprint_details on Spark: the same batch function through mapInArrow."""
    from webdedup.core.fingerprint_detail import detail_batch

    params = settings_from_row(settings.first().asDict()).params
    ship_package(spark)

    def partition(batches):
        for batch in batches:
            yield detail_batch(batch, params)

    ddl = "doc_id string, normalized_text string, shingles array<string>"
    return documents.select("doc_id", "body").mapInArrow(partition, ddl)


def pictures(spark: Any, *, settings: Any, curve: Any, scored: Any) -> Any:
    """lsh_pictures on Spark: the same SVG rows, drawn from collected DataFrames."""
    from webdedup.outputs.pictures import render_pictures

    row = settings.first().asDict()
    rows = render_pictures(
        curve=[(r["jaccard"], r["p_candidate"]) for r in curve.select("jaccard", "p_candidate").collect()],
        jaccards=[r["jaccard"] for r in scored.select("jaccard").collect()],
        threshold=row["threshold"],
        bands=row["bands"],
        rows_per_band=row["rows_per_band"],
    )
    return spark.createDataFrame(rows, "picture string, file_name string, svg string")


def input_files(spark: Any, *, settings: Any, existing: str) -> Any:
    """int_input_files on Spark: the same rows as on DuckDB (the files are read where the driver runs),
    every file hashed (``existing`` is not read: a Spark build rebuilds every table)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from webdedup.outputs.manifest import INPUT_FILE_SCHEMA, input_file_rows

    rows = input_file_rows(settings.first().asDict())
    return spark.createDataFrame(rows, from_arrow_schema(INPUT_FILE_SCHEMA))


def manifest(
    spark: Any,
    *,
    settings: Any,
    inputs: Any,
    summary: Any,
    documents: Any,
    pictures: Any,
    exported: dict,
    output_files: str,
) -> Any:
    """run_manifest on Spark: the manifest row as a one-row DataFrame."""
    import json

    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    from webdedup.outputs.manifest import build_manifest

    files = json.loads(output_files)
    outputs = [(files[name]["file"], frame.count()) for name, frame in exported.items()]
    outputs += [(r["file_name"], None) for r in pictures.select("file_name").orderBy("file_name").collect()]
    row = build_manifest(
        settings_row=settings.first().asDict(),
        summary=summary.first().asDict(),
        source_counts={r["source"]: r["count"] for r in documents.groupBy("source").count().collect()},
        outputs=outputs,
        input_rows=[row.asDict() for row in inputs.orderBy("input_order").collect()],
        engine="spark",
        fingerprints=f"{fingerprint_batch.__module__}.{fingerprint_batch.__qualname__}",
    )
    # the column types DuckDB infers from the same dict (structs, lists of structs), as a Spark schema;
    # rows as plain Python values (pyspark's Arrow path mishandles lists of structs here)
    schema = from_arrow_schema(pa.Table.from_pylist([row]).schema)
    return spark.createDataFrame([row], schema)


def anchor_intersections(
    spark: Any, *, anchor_pairs: Any, shingle_sets: Any, block_mb: Any, existing: str | None
) -> Any:
    """int_anchor_intersections is a DuckDB model: on Spark, scored_pairs joins the shingle rows."""
    raise RuntimeError("int_anchor_intersections runs on DuckDB only (it is disabled on Spark)")


def warc_records(spark: Any, *, existing: str, **_settings: Any) -> Any:
    """stg_warc_records: WARC input is read on the DuckDB target only."""
    raise RuntimeError(
        "WARC input (warc_paths / warc_ranges_path) runs on the DuckDB target only: build the documents "
        "with --target duckdb, or pass them to Spark as Parquet with var documents_path"
    )
