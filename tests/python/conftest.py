"""Shared fixtures (the helpers they use are in tests/python/helpers/)."""

from __future__ import annotations

import pytest

from tests.python.helpers.dbt_runner import run_dbt


@pytest.fixture(scope="session")
def fixture_run(tmp_path_factory):
    """One `dbt build` of the checked-in fixture into a temporary database and output folder."""
    work = tmp_path_factory.mktemp("fixture_run")
    output_dir = work / "output"
    result = run_dbt(["build"], db_path=work / "dedup.duckdb", dbt_vars={"output_dir": str(output_dir)})
    return {"work": work, "output_dir": output_dir, "db_path": work / "dedup.duckdb", "log": result.stdout}
