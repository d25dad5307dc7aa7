"""Engine glue: the same Python models on DuckDB and Spark.

Each dbt Python model is one line, ``return models_for(session).<stage>(dbt, session)``: ``duckdb_models``
and ``spark_models`` give every stage the same signature.  ``udfs`` is the one registry of the
``webdedup_*`` SQL functions the macros call; ``duckdb_plugin`` (dbt-duckdb) and ``spark_session``
(dbt-spark) register them from it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def is_spark_session(session: Any) -> bool:
    """True for a pyspark SparkSession (classic or Spark Connect), false for a DuckDB connection."""
    return type(session).__module__.startswith("pyspark.")


def models_for(session: Any) -> ModuleType:
    """The module implementing the Python models on ``session``'s engine."""
    if is_spark_session(session):
        from webdedup.engines import spark_models

        return spark_models
    from webdedup.engines import duckdb_models

    return duckdb_models
