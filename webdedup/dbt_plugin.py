"""dbt-duckdb plugin: file-system helpers the SQL layer cannot express (DuckDB has no mkdir or rename).

Registered in profiles.yml (``plugins: [{module: webdedup.dbt_plugin}]``).  It adds two scalar functions
to every dbt connection:

* ``webdedup_prepare_dir(path)`` creates the folder if needed and returns its absolute path;
* ``webdedup_publish(tmp_path, final_path)`` atomically renames a finished file into place
  (``os.replace``), so a reader never sees a half-written output file.
"""

from __future__ import annotations

import os

from dbt.adapters.duckdb.plugins import BasePlugin


def prepare_dir(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def publish(tmp_path: str, final_path: str) -> str:
    os.replace(tmp_path, final_path)
    return final_path


class Plugin(BasePlugin):
    def configure_connection(self, conn) -> None:
        for name, func in (("webdedup_prepare_dir", prepare_dir), ("webdedup_publish", publish)):
            try:
                conn.create_function(
                    name, func, ["VARCHAR"] * func.__code__.co_argcount, "VARCHAR", side_effects=True
                )
            except Exception as exc:  # already registered on this connection
                if "already exists" not in str(exc):
                    raise
