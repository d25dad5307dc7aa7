"""benchmarks/run_benchmark.py::run_measured: the CPU time it reports is what the child counted itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.run_benchmark import gnu_time_available, run_measured

# burns 0.3 s of CPU, then sleeps 0.3 s; prints its own CPU time (the oracle)
CHILD = """
import time
while time.process_time() < 0.3:
    pass
time.sleep(0.3)
print(time.process_time())
"""


@pytest.mark.parametrize("rss_method", ["time", "psutil"])
def test_cpu_seconds_are_the_childs_own_and_not_its_sleep(tmp_path: Path, rss_method: str) -> None:
    if rss_method == "time" and not gnu_time_available():
        pytest.skip("GNU time (/usr/bin/time -v) is not installed")
    log = tmp_path / "child.log"
    result = run_measured(
        [sys.executable, "-c", CHILD], env=None, cwd=tmp_path, log_path=log, rss_method=rss_method
    )
    assert result["returncode"] == 0
    own = float(log.read_text().split()[-1])
    # the interpreter's start-up comes on top of what the child counted; the 0.3 s of sleep does not
    assert own <= result["cpu_seconds"] + 0.01
    assert result["cpu_seconds"] < own + 0.25 < result["wall_seconds"] + 0.25
    assert result["wall_seconds"] >= own + 0.3
