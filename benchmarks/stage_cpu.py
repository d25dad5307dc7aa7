"""CPU seconds per dbt node: the build's process tree sampled every SAMPLE_SECONDS, and each interval's CPU
given to the nodes that ran in it (run_results.json: from a node's compile start to its execute end).

On this project's two-core machine the 1M build is CPU-bound (docs/benchmarks.md, session 38): under
`dbt build`'s two threads a stage's wall time includes waiting for the cores another stage holds, so its
CPU seconds are what a change to it can save.  Where nodes overlap, an interval's CPU is split evenly among
them (an estimate); with one dbt thread (run_benchmark.py --dbt-threads 1) nodes do not overlap and each
figure is the node's own, to the sampling interval.  CPU outside every node's window (start-up, parse,
hooks, dbt's bookkeeping between nodes) is reported apart.
"""

from __future__ import annotations

import bisect
import datetime
import itertools
import threading
import time

#: Seconds between two samples of the process tree's CPU time.  A sample costs about 1.3 ms of CPU (psutil
#: listing the tree and reading each member's times), so the trace takes about 1% of one core beside the
#: build it measures.
SAMPLE_SECONDS = 0.1


def tree_cpu_seconds(process) -> float | None:
    """User + system seconds of the psutil ``process`` and its descendants, the children they have waited
    for included (so a child's time stays counted after it exits); None once ``process`` is gone."""
    import psutil

    try:
        members = [process, *process.children(recursive=True)]
    except psutil.Error:
        return None
    total = 0.0
    for member in members:
        try:
            times = member.cpu_times()
        except psutil.Error:  # exited between the listing and the read
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


class CpuTrace:
    """Samples (epoch seconds, tree CPU seconds) of the process ``pid`` on a thread of its own, from
    ``start`` until ``stop``; ``samples`` holds them in time order."""

    def __init__(self, pid: int, interval: float = SAMPLE_SECONDS) -> None:
        import psutil

        self.process, self.interval, self.samples = psutil.Process(pid), interval, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stage-cpu-trace", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            seconds = tree_cpu_seconds(self.process)
            if seconds is not None:
                # a child that exited and is not waited for yet is in no member's times for a moment:
                # the trace never goes down
                self.samples.append((time.time(), max(seconds, self.samples[-1][1] if self.samples else 0.0)))
            self._stop.wait(self.interval)

    def start(self) -> CpuTrace:
        self._thread.start()
        return self

    def stop(self) -> list[tuple[float, float]]:
        self._stop.set()
        self._thread.join()
        return self.samples


def node_windows(run_results: dict) -> dict[str, tuple[float, float]]:
    """Each node's (start, end) in epoch seconds: its compile start (else execute start) to its execute
    end, for the nodes of ``run_results`` (run_results.json) that executed."""
    windows = {}
    for result in run_results["results"]:
        timing = {step["name"]: step for step in result.get("timing", [])}
        execute = timing.get("execute") or {}
        if not execute.get("started_at") or not execute.get("completed_at"):
            continue
        compile_step = timing.get("compile") or {}
        start = compile_step.get("started_at") or execute["started_at"]
        windows[result["unique_id"]] = (_epoch(start), _epoch(execute["completed_at"]))
    return windows


def _epoch(stamp: str) -> float:
    parsed = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if parsed.tzinfo is None:  # dbt writes UTC
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed.timestamp()


def attribute(samples, windows: dict) -> tuple[dict[str, float], float]:
    """The CPU seconds of ``samples`` ((time, cumulative CPU seconds) in time order) per window of
    ``windows`` ({name: (start, end)}), and the seconds outside every window.  Within a sampling interval
    CPU is taken as spent at a constant rate; each piece of the interval between window bounds goes in
    equal shares to the windows open in it."""
    spent = dict.fromkeys(windows, 0.0)
    outside = 0.0
    bounds = sorted({bound for window in windows.values() for bound in window})
    for (start, before), (end, after) in itertools.pairwise(samples):
        if end <= start:
            continue
        rate = (after - before) / (end - start)
        first, last = bisect.bisect_right(bounds, start), bisect.bisect_left(bounds, end)
        cuts = [start, *bounds[first:last], end]
        for left, right in itertools.pairwise(cuts):
            middle = (left + right) / 2
            active = [name for name, (opens, closes) in windows.items() if opens <= middle < closes]
            share = rate * (right - left)
            if not active:
                outside += share
            for name in active:
                spent[name] += share / len(active)
    return spent, outside
