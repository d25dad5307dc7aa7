"""The project's dbt plugin module: lets the standard ``dbt`` command run the Spark target.

dbt-core imports every top-level module whose name starts with ``dbt_`` when it loads a project (its
plugin discovery, ``dbt.plugins.manager.PluginManager.get_prefixed_modules``).  The Spark extras'
install step (``make spark-install``, run by ``make run-spark`` and ``make test``) puts the project root on
the venv's ``sys.path`` with a ``.pth`` file (``webdedup.engines.spark_plugin``), so dbt finds this module.

Importing it does nothing unless dbt has loaded dbt-spark (``--target spark``: dbt loads the adapter
of the profile's target before the project); then it registers the in-process ``session`` submission
method for Python models and the webdedup_* SQL functions (``webdedup.engines.spark_session.register``), which
``python -m webdedup.engines.dbt_spark`` did before.  A DuckDB build pays one ``sys.modules`` lookup.
"""

from __future__ import annotations

import sys

# dbt's plugin manager reads this attribute: the module adds no dbt plugin nodes or artifacts.
plugins: list = []

if "dbt.adapters.spark" in sys.modules:
    from webdedup.engines.spark_session import register

    register()
