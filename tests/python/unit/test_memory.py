"""DuckDB's default memory limit (webdedup/engines/duckdb_memory.py, applied by the dbt plugin)."""

from __future__ import annotations

import duckdb

from webdedup.engines import duckdb_memory as memory
from webdedup.engines.duckdb_plugin import Plugin


def test_a_quarter_of_the_machine_between_one_and_three_gigabytes():
    assert memory.default_memory_limit(16 * 10**9) == "3000MB"  # a 16 GB laptop: capped
    assert memory.default_memory_limit(8 * 10**9) == "2000MB"
    assert memory.default_memory_limit(2 * 10**9) == "1000MB"  # floor
    assert memory.default_memory_limit(None) == "3000MB"  # unknown machine


def test_the_environment_variable_overrides_the_default():
    assert memory.memory_limit({"DEDUP_MEMORY_LIMIT": "8GB"}) == "8GB"
    assert memory.memory_limit({"DEDUP_MEMORY_LIMIT": " "}) == memory.default_memory_limit(
        memory.machine_memory_bytes()
    )


def test_the_plugin_puts_the_limit_into_duckdbs_connection_config(monkeypatch):
    monkeypatch.setenv("DEDUP_MEMORY_LIMIT", "1234MB")
    config: dict = {}
    Plugin.update_connection_config(None, None, config)
    assert config == {"memory_limit": "1234MB"}
    connection = duckdb.connect(config=config)
    # DuckDB reports the limit in binary units: 1234 MB = 1.1 GiB
    assert connection.execute("select current_setting('memory_limit')").fetchall()[0][0] == "1.1 GiB"
    kept = {"memory_limit": "2GB"}  # a profile's config_options entry wins
    Plugin.update_connection_config(None, None, kept)
    assert kept == {"memory_limit": "2GB"}
