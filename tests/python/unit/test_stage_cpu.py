"""benchmarks/stage_cpu.py: CPU seconds per dbt node from a sampled trace of the build's processes.  The
attribution is checked against a numeric integration of the same trace on a fine grid, and the trace
against what a child process counted itself."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
import time

import pytest

from benchmarks.stage_cpu import CpuTrace, attribute, node_windows


def _integrated(samples, windows, step=1e-4):
    """The same split by brute force: walk the trace in tiny steps, each step's CPU in equal shares to the
    windows open at it."""
    spent = dict.fromkeys(windows, 0.0)
    outside = 0.0
    for (start, before), (end, after) in itertools.pairwise(samples):
        rate = (after - before) / (end - start)
        steps = round((end - start) / step)
        for index in range(steps):
            middle = start + (index + 0.5) * (end - start) / steps
            active = [name for name, (opens, closes) in windows.items() if opens <= middle < closes]
            share = rate * (end - start) / steps
            if not active:
                outside += share
            for name in active:
                spent[name] += share / len(active)
    return spent, outside


def test_a_constant_rate_is_split_by_time_and_shared_where_nodes_overlap():
    samples = [(index / 10, 1.5 * index / 10) for index in range(101)]  # 1.5 cores for 10 s
    windows = {"a": (1.0, 4.0), "b": (3.0, 6.0), "c": (7.0, 7.05)}
    spent, outside = attribute(samples, windows)
    assert spent["a"] == pytest.approx(1.5 * (2 + 0.5))  # alone 1-3 s, shared with b 3-4 s
    assert spent["b"] == pytest.approx(1.5 * (0.5 + 2))
    assert spent["c"] == pytest.approx(1.5 * 0.05)  # shorter than a sampling interval
    assert outside == pytest.approx(1.5 * (10 - 5 - 0.05))


@pytest.mark.parametrize("seed", range(20))
def test_random_traces_match_a_fine_integration(seed):
    draw = random.Random(seed)
    times = sorted({round(draw.uniform(0, 5), 3) for _ in range(25)} | {0.0, 5.0})
    used, samples = 0.0, []
    for moment in times:
        samples.append((moment, used))
        used += draw.uniform(0, 0.2)
    windows = {}
    for index in range(draw.randint(0, 8)):
        start = round(draw.uniform(-0.5, 5), 3)
        windows[f"node{index}"] = (start, round(start + draw.uniform(0.001, 2), 3))
    spent, outside = attribute(samples, windows)
    expected, expected_outside = _integrated(samples, windows)
    for name in windows:
        assert spent[name] == pytest.approx(expected[name], abs=2e-3)
    assert outside == pytest.approx(expected_outside, abs=2e-3)
    # nothing lost or counted twice
    assert sum(spent.values()) + outside == pytest.approx(samples[-1][1] - samples[0][1])


def test_node_windows_run_from_compile_start_to_execute_end():
    run_results = {
        "results": [
            {
                "unique_id": "model.p.stg",
                "timing": [
                    {
                        "name": "compile",
                        "started_at": "2026-12-06T10:00:00.000000Z",
                        "completed_at": "2026-12-06T10:00:00.500000Z",
                    },
                    {
                        "name": "execute",
                        "started_at": "2026-12-06T10:00:00.500000Z",
                        "completed_at": "2026-12-06T10:00:02.250000Z",
                    },
                ],
            },
            {"unique_id": "exposure.p.corpus", "timing": []},  # nothing executed: no window
            {
                "unique_id": "test.p.unique",
                "timing": [
                    {
                        "name": "execute",
                        "started_at": "2026-12-06T10:00:03Z",
                        "completed_at": "2026-12-06T10:00:03.100000Z",
                    },
                ],
            },
        ]
    }
    windows = node_windows(run_results)
    assert set(windows) == {"model.p.stg", "test.p.unique"}
    start, end = windows["model.p.stg"]
    assert end - start == pytest.approx(2.25)
    assert windows["test.p.unique"][0] - start == pytest.approx(3.0)


# burns 0.4 s of CPU, sleeps 0.3 s, prints what it counted itself (the oracle)
CHILD = """
import time
while time.process_time() < 0.4:
    pass
time.sleep(0.3)
print(time.process_time())
"""


def test_the_trace_follows_the_cpu_the_child_counted_itself():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    trace = CpuTrace(child.pid, interval=0.01).start()
    own = float(child.communicate()[0])
    time.sleep(0.05)
    samples = trace.stop()
    assert len(samples) > 10
    assert all(
        later[0] > earlier[0] and later[1] >= earlier[1] for earlier, later in itertools.pairwise(samples)
    )
    # the last samples fall in the child's sleep, when it has counted all its CPU (to a clock tick); the
    # trace saw that CPU grow from the first sample on
    assert abs(samples[-1][1] - own) <= 0.05
    assert samples[0][1] < own / 2
