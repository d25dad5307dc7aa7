"""Make the standard ``dbt`` command find the project's dbt plugin module (``dbt_webdedup.py``).

``python -m webdedup.engines.spark_plugin`` (run by the Makefile's Spark install step) writes
``web_text_dedup.pth`` into the running interpreter's site-packages.  The file holds one line, the
project root, so every Python of that venv has the project root on ``sys.path`` (what an editable
install does); dbt-core's plugin discovery then imports ``dbt_webdedup``, which registers the Spark
helpers when the target is Spark.  Running it again rewrites the same line.
"""

from __future__ import annotations

import os
import sys
import sysconfig

PTH_NAME = "web_text_dedup.pth"
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pth_path() -> str:
    """Where the .pth file goes: this interpreter's site-packages (purelib)."""
    return os.path.join(sysconfig.get_paths()["purelib"], PTH_NAME)


def install(project_root: str = PROJECT_ROOT) -> str:
    """Write the .pth file naming ``project_root``; returns its path."""
    path = pth_path()
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(os.path.abspath(project_root) + "\n")
    return path


def main() -> int:
    print(f"dbt plugin: {install()} -> {PROJECT_ROOT} (dbt --target spark loads dbt_webdedup.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
