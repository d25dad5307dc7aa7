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
    assert config["memory_limit"] == "1234MB"
    connection = duckdb.connect(config=config)
    # DuckDB reports the limit in binary units: 1234 MB = 1.1 GiB
    assert connection.execute("select current_setting('memory_limit')").fetchall()[0][0] == "1.1 GiB"
    kept = {"memory_limit": "2GB", "allocator_flush_threshold": "1GB"}  # a profile's config_options win
    Plugin.update_connection_config(None, None, kept)
    assert kept["memory_limit"] == "2GB" and kept["allocator_flush_threshold"] == "1GB"


def test_duckdb_keeps_freed_memory_below_its_limit(monkeypatch):
    """The block allocator holds half the limit (lend may take the other half); allocator caches are not
    flushed below the limit; DuckDB accepts all three at connect."""
    monkeypatch.setenv("DEDUP_MEMORY_LIMIT", "3000MB")
    config: dict = {}
    Plugin.update_connection_config(None, None, config)
    assert config == {
        "memory_limit": "3000MB",
        "block_allocator_memory": "1500MB",
        "allocator_flush_threshold": "3000MB",
        "allocator_bulk_deallocation_flush_threshold": "3000MB",
    }
    connection = duckdb.connect(config=config)
    settings = dict(connection.execute("select name, value from duckdb_settings()").fetchall())
    assert settings["block_allocator_memory"] == "1.3 GiB"  # 1500 MB
    assert settings["allocator_bulk_deallocation_flush_threshold"] == "2.7 GiB"  # 3000 MB
    assert settings["allocator_flush_threshold"] == "3000MB"  # (DuckDB echoes this one as given)
    assert memory.allocator_settings("80%") == {}


def test_sizes_parse_as_duckdb_reads_them():
    assert memory.size_bytes("3000MB") == memory.size_bytes("3GB") == memory.size_bytes("3 G") == 3 * 10**9
    assert memory.size_bytes("2.5GiB") == int(2.5 * 2**30)
    assert memory.size_bytes("512KiB") == 512 * 1024
    for unknown in ("80%", "", "GB", "3XB", None):
        assert memory.size_bytes(unknown) is None


def _limit(connection) -> int:
    """DuckDB's current limit in bytes (it reports binary units to a tenth, rounded down)."""
    return memory.size_bytes(connection.execute("select current_setting('memory_limit')").fetchall()[0][0])


def test_a_lender_lowers_the_limit_while_it_runs_and_restores_it(monkeypatch):
    monkeypatch.setitem(memory._lent, "configured", "3000MB")
    monkeypatch.setitem(memory._lent, "bytes", 0)
    connection = duckdb.connect(config={"memory_limit": "3000MB"})
    before = _limit(connection)
    with memory.lend(connection.cursor(), 1000 * 10**6):
        during = _limit(connection)  # the setting is the database's, seen from every cursor
        with memory.lend(connection.cursor(), 1000 * 10**6):  # two lenders add up, capped at half
            assert abs(_limit(connection) - 1500 * 10**6) < 0.1 * 2**30
        assert _limit(connection) == during
    assert abs(during - 2000 * 10**6) < 0.1 * 2**30
    assert _limit(connection) == before
    assert memory._lent["bytes"] == 0


def test_a_lender_restores_the_limit_when_the_caller_fails(monkeypatch):
    monkeypatch.setitem(memory._lent, "configured", "2GB")
    monkeypatch.setitem(memory._lent, "bytes", 0)
    connection = duckdb.connect(config={"memory_limit": "2GB"})
    before = _limit(connection)
    try:
        with memory.lend(connection, 500 * 10**6):
            raise RuntimeError("the model failed")
    except RuntimeError:
        pass
    assert _limit(connection) == before


def test_an_unknown_limit_lends_nothing(monkeypatch):
    monkeypatch.setitem(memory._lent, "configured", "80%")
    connection = duckdb.connect(config={"memory_limit": "80%"})
    before = _limit(connection)
    with memory.lend(connection, 500 * 10**6):
        assert _limit(connection) == before


def test_duckdb_decompresses_a_vector_of_long_texts_into_the_buffer_the_model_expects(tmp_path):
    """The fact the memory sizing rests on, checked against DuckDB itself: reading a zstd text column
    allocates one buffer per 2,048-row vector, its text rounded up to a power of two (40 MB -> 64 MiB)."""
    connection = duckdb.connect(str(tmp_path / "pages.duckdb"), config={"force_compression": "zstd"})
    connection.execute("create table pages as select repeat(md5(i::varchar), 625) body from range(2048) r(i)")
    connection.execute("checkpoint")
    text = connection.execute("select sum(strlen(body)) from pages").fetchall()[0][0]
    assert text == 2048 * 32 * 625  # 40,960,000 bytes: one vector
    assert memory.text_vector_buffer(text) == 64 * 2**20
    connection.execute("set memory_limit = '60MB'")
    try:
        connection.execute("select max(strlen(body)) from pages").fetchall()
    except duckdb.OutOfMemoryException as exc:
        assert "failed to allocate data of size 64.0 MiB" in str(exc)
    else:
        raise AssertionError("DuckDB read a 64 MiB vector within a 60 MB limit")


def test_the_limit_holds_every_readers_vector_buffer_beside_half_the_configured_limit():
    assert memory.text_vector_buffer(0) == 0
    assert memory.text_vector_buffer(2**20) == 2**20
    assert memory.text_vector_buffer(1_100_000_000) == 2**31  # 2,048 pages of 540 KB
    configured = 3000 * 10**6
    assert memory.limit_for_text_vectors(configured, 1_100_000_000, 2, 24 * 10**9) == 2 * 2**31 + 1500 * 10**6
    assert memory.limit_for_text_vectors(configured, 40_000_000, 2, 24 * 10**9) == configured  # short pages
    # at most half the machine
    assert memory.limit_for_text_vectors(configured, 1_100_000_000, 2, 8 * 10**9) == 4 * 10**9
    assert memory.limit_for_text_vectors(configured, 1_100_000_000, 2, 4 * 10**9) == configured  # never lower
    assert memory.limit_for_text_vectors(configured, 1_100_000_000, 4, None) == 4 * 2**31 + 1500 * 10**6


def test_a_derived_limit_is_raised_for_long_texts_and_lenders_restore_the_raised_one(monkeypatch):
    monkeypatch.setitem(memory._lent, "configured", "3000MB")
    monkeypatch.setitem(memory._lent, "opened", "3000MB")
    monkeypatch.setitem(memory._lent, "derived", True)
    monkeypatch.setitem(memory._lent, "bytes", 0)
    monkeypatch.setattr(memory, "machine_memory_bytes", lambda: 24 * 10**9)
    connection = duckdb.connect(config={"memory_limit": "3000MB"})
    assert memory.size_for_text_vectors(connection, 40_000_000, 2) == ""  # nothing to raise
    line = memory.size_for_text_vectors(connection, 1_100_000_000, 2)
    assert line.startswith("DuckDB memory_limit raised from 3000MB to 5794MB")  # 2 x 2 GiB + 1500 MB
    assert memory._lent["configured"] == "5794MB"
    raised = _limit(connection)
    assert abs(raised - 5794 * 10**6) < 0.1 * 2**30
    with memory.lend(connection, 1000 * 10**6):
        assert abs(_limit(connection) - 4794 * 10**6) < 0.1 * 2**30
    assert _limit(connection) == raised
    # sized again for the same text (a run's start, then after staging): nothing changes
    assert memory.size_for_text_vectors(connection, 1_100_000_000, 2) == ""
    assert memory._lent["configured"] == "5794MB" and _limit(connection) == raised
    # longer text later: reckoned from the opened 3000MB (2 x 4 GiB + 1500 MB), not from the raised limit
    line = memory.size_for_text_vectors(connection, 2_200_000_000, 2)
    assert line.startswith("DuckDB memory_limit raised from 5794MB to 10089MB")


def test_an_explicit_limit_is_kept_and_the_log_line_says_what_it_may_need(monkeypatch):
    monkeypatch.setitem(memory._lent, "configured", "3000MB")
    monkeypatch.setitem(memory._lent, "opened", "3000MB")
    monkeypatch.setitem(memory._lent, "derived", False)
    monkeypatch.setattr(memory, "machine_memory_bytes", lambda: 24 * 10**9)
    connection = duckdb.connect(config={"memory_limit": "3000MB"})
    before = _limit(connection)
    line = memory.size_for_text_vectors(connection, 1_100_000_000, 2)
    assert line.startswith("memory_limit 3000MB (set explicitly) may be too low") and "5794MB" in line
    assert _limit(connection) == before and memory._lent["configured"] == "3000MB"


def test_the_plugin_marks_only_its_own_default_as_derived(monkeypatch):
    monkeypatch.delenv("DEDUP_MEMORY_LIMIT", raising=False)
    Plugin.update_connection_config(None, None, {})
    assert memory._lent["derived"] is True
    Plugin.update_connection_config(None, None, {"memory_limit": "2GB"})  # the profile's
    assert memory._lent["derived"] is False
    monkeypatch.setenv("DEDUP_MEMORY_LIMIT", "4GB")
    Plugin.update_connection_config(None, None, {})
    assert memory._lent["derived"] is False
