"""Run dbt on Spark with the project's Python models: ``python -m webdedup.engines.dbt_spark <dbt args>``.

Open-source Spark has no dbt-spark submission method for Python models; this entry point registers an
in-process ``session`` method (webdedup/engines/spark_session.py) and then runs dbt exactly as the ``dbt``
command would, e.g.::

    .venv/bin/python -m webdedup.engines.dbt_spark build --target spark --profiles-dir .

Run it from the project root.  On Databricks, plain ``dbt build --target <databricks target>`` runs the
same models with Databricks' own submission methods.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    from webdedup.engines.spark_session import register

    register()
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        print(f"dbt failed: {result.exception}", file=sys.stderr)
        return 2
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
