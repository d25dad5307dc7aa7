"""The Python models' Spark path: the same model files run on DuckDB and on Spark.

A dbt Python model gets the engine's session; :func:`is_spark_session` tells the two apart and the
model hands over to the functions here when it is Spark.  ``dbt.ref(...)`` is then a Spark DataFrame
and the model returns one.

* Fingerprints: ``mapInArrow`` over :func:`webdedup.fingerprint.fingerprint_batch`, the very function
  the DuckDB model streams its record batches through, so signatures are bit-identical across engines
  (each document's fingerprint depends on its own body only, not on how rows are batched).
* Manifest: the same :func:`webdedup.manifest.build_manifest`, fed from DataFrames.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from typing import Any

from webdedup.fingerprint import settings_from_row

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


def is_spark_session(session: Any) -> bool:
    """True for a pyspark SparkSession (classic or Spark Connect), false for a DuckDB connection."""
    return type(session).__module__.startswith("pyspark.")


def ship_package(spark: Any) -> None:
    """On a cluster, send the webdedup package to the executors (local masters import it directly)."""
    master = spark.conf.get("spark.master", "local")
    if master.startswith("local"):
        return
    package = os.path.dirname(os.path.abspath(__file__))
    archive = os.path.join(tempfile.mkdtemp(prefix="webdedup-"), "webdedup.zip")
    with zipfile.ZipFile(archive, "w") as zipped:
        for name in sorted(os.listdir(package)):
            if name.endswith(".py"):
                zipped.write(os.path.join(package, name), f"webdedup/{name}")
    if hasattr(spark, "addArtifacts"):  # Spark Connect
        spark.addArtifacts(archive, pyfile=True)
    else:
        spark.sparkContext.addPyFile(archive)


def _map_batches(
    settings_df: Any, documents_df: Any, spark: Any, function_name: str, ddl: str, shingles_only: bool
):
    """mapInArrow of a webdedup.fingerprint batch function over (doc_id, body), with the body hash (from
    stg_documents) and the settings key carried along as on DuckDB (Spark builds are full builds, so
    they only keep the columns alike)."""
    from pyspark.sql import functions as F

    from webdedup.incremental import settings_key

    settings = settings_from_row(settings_df.first().asDict())
    params = settings.params
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(settings.batch_size))
    ship_package(spark)
    key = settings_key(params, shingles_only=shingles_only)

    def partition(batches):
        from webdedup import fingerprint

        function = getattr(fingerprint, function_name)
        for batch in batches:
            yield fingerprint.carry_columns(function(batch, params), batch, _CARRIED)

    source = documents_df.select(
        "doc_id",
        "body",
        "body_hash",
        F.lit(key).alias("settings_key"),
    )
    return source.mapInArrow(partition, ddl)


def fingerprints(settings_df: Any, documents_df: Any, spark: Any) -> Any:
    """int_fingerprints on Spark: a DataFrame of FINGERPRINT_DDL, one row per document."""
    return _map_batches(settings_df, documents_df, spark, "fingerprint_batch", FINGERPRINT_DDL, False)


def shingle_sets(settings_df: Any, documents_df: Any, spark: Any) -> Any:
    """int_shingle_sets on Spark: a DataFrame of SHINGLE_SET_DDL for the documents given."""
    return _map_batches(settings_df, documents_df, spark, "shingle_set_batch", SHINGLE_SET_DDL, True)


def pictures(settings_df: Any, curve_df: Any, scored_df: Any, spark: Any) -> Any:
    """lsh_pictures on Spark: the same SVG rows, drawn from collected DataFrames."""
    from webdedup.pictures import render_pictures

    settings = settings_df.first().asDict()
    rows = render_pictures(
        curve=[(r["jaccard"], r["p_candidate"]) for r in curve_df.select("jaccard", "p_candidate").collect()],
        jaccards=[r["jaccard"] for r in scored_df.select("jaccard").collect()],
        threshold=settings["threshold"],
        bands=settings["bands"],
        rows_per_band=settings["rows_per_band"],
    )
    return spark.createDataFrame(rows, "picture string, file_name string, svg string")


def manifest(
    spark: Any, *, settings_df: Any, summary_df: Any, documents_df: Any, exported: dict[str, Any]
) -> Any:
    """run_manifest on Spark: the manifest row as a one-row DataFrame."""
    import pyarrow as pa

    from webdedup.manifest import build_manifest

    settings = settings_df.first().asDict()
    summary = summary_df.first().asDict()
    source_rows = documents_df.groupBy("source").count().collect()
    row_counts = {name: frame.count() for name, frame in exported.items()}
    row = build_manifest(
        settings={
            k: v for k, v in settings.items() if k not in ("output_dir", "staging_dir", "documents_path")
        },
        summary=summary,
        source_counts={str(r["source"]): r["count"] for r in source_rows},
        output_dir=settings["staging_dir"],
        documents_path=settings["documents_path"],
        seed_path="seeds/documents.csv",
        row_counts=row_counts,
        engine="spark",
    )
    # the column types DuckDB infers from the same dict (structs, lists of structs), as a Spark schema;
    # rows as plain Python values (pyspark's Arrow path mishandles lists of structs here)
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(pa.Table.from_pylist([row]).schema)
    return spark.createDataFrame([row], schema)
