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

#: Spark DDL of webdedup.fingerprint.FINGERPRINT_SCHEMA (the int_fingerprints columns).
FINGERPRINT_DDL = (
    "doc_id string, normalized_text string, token_count int, shingle_count int, "
    "shingle_set array<bigint>, shingle_set_key bigint, signature array<bigint>, band_keys array<bigint>"
)


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


def fingerprints(settings_df: Any, documents_df: Any, spark: Any) -> Any:
    """int_fingerprints on Spark: a DataFrame of FINGERPRINT_DDL, one row per document."""
    settings = settings_from_row(settings_df.first().asDict())
    params = settings.params
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(settings.batch_size))
    ship_package(spark)

    def fingerprint_partition(batches):
        from webdedup.fingerprint import fingerprint_batch

        for batch in batches:
            yield fingerprint_batch(batch, params)

    return documents_df.select("doc_id", "body").mapInArrow(fingerprint_partition, FINGERPRINT_DDL)


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
