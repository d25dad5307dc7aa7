"""dbt-spark glue for open-source Spark: Python models and file helpers in the dbt process.

dbt-spark submits Python models only to Databricks (``all_purpose_cluster``, ``job_cluster``).  With the
``session`` connection method dbt already drives an in-process SparkSession, so a Python model can simply
run there.  :func:`register` (called by the ``python -m webdedup.engines.dbt_spark`` entry point) does three
things:

* adds a ``session`` submission method to dbt-spark: :class:`SessionPythonJobHelper` executes the
  compiled model (dbt's ``model(dbt, spark)`` plus its ``saveAsTable``) with ``spark`` bound to the
  active SparkSession, and makes ``session`` the default when the profile uses ``method: session``
  (a Databricks profile keeps its own default, so the same model files run there unchanged);
* registers the Spark functions of the registry (webdedup/engines/udfs.py) on the session, so the export
  and publish macros work as on DuckDB;
* points Spark's Python workers at this interpreter and this project (``PYSPARK_PYTHON``,
  ``PYTHONPATH``), so ``mapInArrow`` and the SQL functions can import ``webdedup``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBMISSION_METHOD = "session"
_state = {"registered": False, "functions_on": None}


def configure_python_workers() -> None:
    """Spark's Python workers use this interpreter and can import this project (set before the JVM starts)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    paths = [PROJECT_ROOT, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))


def register_functions(spark: Any) -> None:
    """Register the registry's Spark functions (webdedup/engines/udfs.py) on ``spark``, once per session.
    They run in Spark's Python workers (on a cluster, the executors' machines), so ``output_dir`` must be
    a folder every executor and the driver see at the same path (docs/engines.md)."""
    if _state["functions_on"] is spark:
        return
    from webdedup.engines.spark_models import ship_package
    from webdedup.engines.udfs import SPARK, for_engine

    ship_package(spark)  # off a local master the functions run where only shipped code is importable
    for udf in for_engine(SPARK):
        spark.udf.register(udf.name, udf.function, udf.sql_types(SPARK)[1])
    _state["functions_on"] = spark


class SessionPythonJobHelper:
    """dbt PythonJobHelper that runs a compiled Python model in this process's SparkSession."""

    def __init__(self, parsed_model: dict, credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> None:
        from pyspark.sql import SparkSession

        # dbt's own session (a Connect session has no classic active session to find)
        spark = _state["functions_on"] or SparkSession.getActiveSession()
        spark = spark or SparkSession.builder.getOrCreate()
        register_functions(spark)
        name = self.parsed_model.get("alias") or self.parsed_model.get("name", "model")
        code = compile(compiled_code, f"<dbt python model {name}>", "exec")
        exec(code, {"spark": spark, "__name__": f"dbt_python_model_{name}"})


def register() -> None:
    """Patch dbt-spark (in this process) with the session submission method and the SQL functions."""
    if _state["registered"]:
        return
    configure_python_workers()
    from dbt.adapters.base.impl import PythonJobHelper
    from dbt.adapters.spark import session as spark_session_module
    from dbt.adapters.spark.impl import SparkAdapter

    helper = type("SessionPythonJobHelper", (SessionPythonJobHelper, PythonJobHelper), {})
    base_helpers = SparkAdapter.python_submission_helpers.fget
    base_default = SparkAdapter.default_python_submission_method.fget

    def python_submission_helpers(self):
        return {**base_helpers(self), SUBMISSION_METHOD: helper}

    def default_python_submission_method(self):
        if str(getattr(self.config.credentials, "method", "")) in (
            "session",
            "SparkConnectionMethod.SESSION",
        ):
            return SUBMISSION_METHOD
        return base_default(self)

    SparkAdapter.python_submission_helpers = property(python_submission_helpers)
    SparkAdapter.default_python_submission_method = property(default_python_submission_method)

    cursor_execute = spark_session_module.Cursor.execute

    def execute(self, sql, *parameters):
        if _state["functions_on"] is None:
            # the same builder dbt-spark uses, so the functions land on dbt's own session
            builder = spark_session_module.SparkSession.builder.enableHiveSupport()
            for parameter, value in self.server_side_parameters.items():
                builder = builder.config(parameter, value)
            spark = builder.getOrCreate()
            with contextlib.suppress(Exception):  # Spark Connect sessions have no SparkContext
                spark.sparkContext.setLogLevel(os.environ.get("DEDUP_SPARK_LOG_LEVEL", "ERROR"))
            register_functions(spark)
        return cursor_execute(self, sql, *parameters)

    spark_session_module.Cursor.execute = execute

    # dbt-spark's session method quotes seed values as '{value}' without escaping, so a body with an
    # apostrophe breaks `dbt seed`; Spark literals take backslash escapes.
    fix_binding = spark_session_module.SessionConnectionWrapper._fix_binding.__func__

    def _fix_binding(cls, value):
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return fix_binding(cls, value)

    spark_session_module.SessionConnectionWrapper._fix_binding = classmethod(_fix_binding)
    _state["registered"] = True
