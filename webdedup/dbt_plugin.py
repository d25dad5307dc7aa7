"""dbt-duckdb plugin: file-system helpers the SQL layer cannot express (DuckDB has no mkdir or rename).

Registered in profiles.yml (``plugins: [{module: webdedup.dbt_plugin}]``).  It adds two scalar functions
to every dbt connection:

* ``webdedup_prepare_dir(path)`` creates the folder if needed and returns its absolute path;
* ``webdedup_publish(tmp_path, final_path)`` atomically renames a finished file into place
  (``os.replace``), so a reader never sees a half-written output file;
* ``webdedup_publish_database(build_path, publish_dir)`` copies the (checkpointed) build database to
  ``publish_dir`` under a temporary name and renames it into place, so analysts' read-only connections
  never block the build and never see a half-built database.
"""

from __future__ import annotations

import os
import shutil

from dbt.adapters.duckdb.plugins import BasePlugin


def prepare_dir(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def publish(tmp_path: str, final_path: str) -> str:
    os.replace(tmp_path, final_path)
    return final_path


def publish_database(build_path: str, publish_dir: str) -> str:
    source = os.path.abspath(build_path)
    target = os.path.join(os.path.abspath(publish_dir), os.path.basename(source))
    if target == source:
        return f"{target} (built in place)"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    temporary = f"{target}.{os.getpid()}.tmp"
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)
    return target


class Plugin(BasePlugin):
    def configure_connection(self, conn) -> None:
        functions = (
            ("webdedup_prepare_dir", prepare_dir),
            ("webdedup_publish", publish),
            ("webdedup_publish_database", publish_database),
        )
        for name, func in functions:
            try:
                conn.create_function(
                    name, func, ["VARCHAR"] * func.__code__.co_argcount, "VARCHAR", side_effects=True
                )
            except Exception as exc:  # already registered on this connection
                if "already exists" not in str(exc):
                    raise
