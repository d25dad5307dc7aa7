"""How the full dbt build scales: wall time, peak RSS, peak disk and stage times per corpus size.

One invocation generates (or reuses) a corpus per size with ``benchmarks/generate_corpus.py`` (the same
corpora as ``run_benchmark.py``), runs the full ``dbt build`` on each (tests, outputs and the published
database included, default memory settings unless ``--memory-limit``) and runs the rensa baseline beside
it at ``--rensa-at`` (default 1M) in the same invocation.  Per size it reports:

* wall time and peak RSS of the build's process tree (``run_benchmark.run_measured``);
* peak disk, sampled every 0.5 s while the build runs: the database (build file and WAL), DuckDB's
  spill folder (``<database>.tmp``), the output folder and the published database (a hard link to the
  build file counts once), each at its own peak and all four together at their joint peak, against
  the input's size on disk;
* every stage's time (dbt's run_results.json).

It writes the figures as JSON and draws the cost curve (wall time and peak RSS against documents, both
axes logarithmic, with a line of slope one through the smallest size for linear cost) as an SVG
(default ``docs/benchmarks_cost_curve.svg``).

Usage::

    python benchmarks/scale_benchmark.py [--sizes 100000,1000000] [--with-10m] [--rensa-at 1000000]
        [--work bench_work/scale] [--svg docs/benchmarks_cost_curve.svg] [--json scale.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # make ``benchmarks``, ``webdedup`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import run_benchmark as rb
from benchmarks import stage_cpu

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SIZES = (100_000, 1_000_000)
TEN_MILLION = 10_000_000
SAMPLE_SECONDS = 0.5
DISK_PARTS = ("database", "spill", "outputs", "published")


def tree_bytes(path: Path, seen: set | None = None) -> int:
    """Bytes allocated to a file, or to every file under a folder (0 when missing).  Files already in
    ``seen`` (device and inode: hard links, such as the published database) count once."""
    seen = set() if seen is None else seen
    paths = [path] if path.is_file() else (Path(f, n) for f, _, names in os.walk(path) for n in names)
    total = 0
    for file in paths:
        with contextlib.suppress(OSError):  # a spill or staging file removed while walking
            status = os.lstat(file)
            if (status.st_dev, status.st_ino) not in seen:
                seen.add((status.st_dev, status.st_ino))
                total += status.st_blocks * 512
    return total


def disk_parts(work: Path) -> dict[str, int]:
    """The disk the build of ``run_benchmark.run_dbt`` in ``work`` uses now, by part (bytes allocated;
    a file linked from two parts counts in the first: the published database is a hard link to the
    build file and adds nothing until the next build writes its own copy)."""
    database, seen = work / "bench.duckdb", set()
    return {
        "database": tree_bytes(database, seen) + tree_bytes(Path(f"{database}.wal"), seen),
        "spill": tree_bytes(Path(f"{database}.tmp"), seen),
        "outputs": tree_bytes(work / "output", seen),
        "published": tree_bytes(work / "published", seen),
    }


def tree_rss() -> int:
    """Summed RSS (bytes) of this process's children and their descendants: the build's processes."""
    import psutil

    total = 0
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            total += child.memory_info().rss
    return total


class DiskSampler:
    """Samples ``disk_parts(work)`` on a thread until stopped; keeps each part's and the total's peak,
    and the build's RSS over time (``rss``: (UTC time, bytes) pairs) for each stage's peak.

    Guard: when the file system's free space falls below ``min_free_bytes``, the build (every child
    process of this benchmark) is terminated, so that a build too large for the disk stops before it
    fills a disk other programs share; ``stopped`` then says so."""

    def __init__(self, work: Path, min_free_bytes: int = 0) -> None:
        self.work = work
        self.min_free_bytes = min_free_bytes
        self.peaks = dict.fromkeys(DISK_PARTS, 0)
        self.peak_total = 0
        self.peak_parts = dict.fromkeys(DISK_PARTS, 0)  # each part at the joint peak
        self.peak_at: datetime | None = None
        self.samples = 0
        self.rss: list[tuple[datetime, int]] = []
        self.stopped = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        parts = disk_parts(self.work)
        for name, value in parts.items():
            self.peaks[name] = max(self.peaks[name], value)
        now = datetime.now(UTC)
        if sum(parts.values()) > self.peak_total:
            self.peak_total, self.peak_parts, self.peak_at = sum(parts.values()), parts, now
        self.rss.append((now, tree_rss()))
        self.samples += 1
        free = shutil.disk_usage(self.work).free
        if self.min_free_bytes and free < self.min_free_bytes and not self.stopped:
            self.stopped = (
                f"stopped by the disk guard: {free / 1e9:.1f} GB free < {self.min_free_bytes / 1e9:g} GB"
            )
            import psutil

            for child in psutil.Process().children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.terminate()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def __enter__(self) -> DiskSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def run_size(docs: int, args: argparse.Namespace, rss_method: str, given: Path | None = None) -> dict:
    """Build one corpus: the generated one of `docs` documents, or the file `given` (--corpus)."""
    work = Path(args.work).resolve() / (given.stem if given else str(docs))
    print(f"[{given or f'{docs:,}'}] corpus ...", file=sys.stderr, flush=True)
    if given:
        work.mkdir(parents=True, exist_ok=True)
        corpus = {"path": str(given), "stats": rb.corpus_stats(given)}
        docs = corpus["stats"]["documents"]
    else:
        corpus = rb.ensure_corpus(work, docs, args.seed, 0, workers=max(1, args.threads))
    corpus_path = Path(corpus["path"])
    print(f"[{docs:,}] dbt build ...", file=sys.stderr, flush=True)
    rb.clear_build(work)  # before sampling: an earlier build's files are not this one's disk
    with DiskSampler(work, int(args.min_free_gb * 1e9)) as sampler:
        dbt = rb.run_dbt(
            corpus_path,
            work,
            threads=args.threads,
            memory_limit=args.memory_limit,
            skip_tests=False,
            rss_method=rss_method,
            publish=not args.no_publish,
        )
    windows = stage_windows(work / "target" / "run_results.json")
    stage_peak_rss(windows, dbt.get("stages", []), sampler.rss)
    if dbt["returncode"] != 0:
        print(f"[{docs:,}] dbt failed:\n{rb._log_tail(dbt['log'])}", file=sys.stderr)
    result = {
        "documents": corpus["stats"]["documents"],
        "body_bytes": corpus["stats"]["body_bytes"],
        "input_bytes": corpus_path.stat().st_size,
        "dbt": dbt,
        "disk_peaks": sampler.peaks,
        "disk_peak_total": sampler.peak_total,
        "disk_peak_parts": sampler.peak_parts,
        "disk_peak_during": sorted(
            unique_id.split(".")[-1]
            for unique_id, (start, end) in windows.items()
            if sampler.peak_at and start <= sampler.peak_at <= end
        ),
        "disk_samples": sampler.samples,
        "disk_guard": sampler.stopped,
        "published": not args.no_publish,
        "corpus": str(given) if given else "generated",
    }
    if docs == args.rensa_at or (given and args.rensa_at):
        print(f"[{docs:,}] rensa ...", file=sys.stderr, flush=True)
        rensa = rb.run_baseline("rensa", corpus_path, work, threads=args.threads, rss_method=rss_method)
        result["rensa"] = rensa
        if rensa["returncode"] == 0 and dbt["returncode"] == 0:
            result["rensa_over_dbt_wall"] = round(rensa["wall_seconds"] / dbt["wall_seconds"], 2)
    return result


def stage_windows(run_results: Path) -> dict[str, tuple[datetime, datetime]]:
    """Each node's window (stage_cpu.node_windows: its compile start to its execute end, export post-hooks
    included) in run_results.json, as UTC datetimes; {} when the build wrote none."""
    if not run_results.exists():
        return {}
    windows = stage_cpu.node_windows(json.loads(run_results.read_text(encoding="utf-8")))
    return {
        unique_id: (datetime.fromtimestamp(start, UTC), datetime.fromtimestamp(end, UTC))
        for unique_id, (start, end) in windows.items()
    }


def stage_peak_rss(
    windows: dict[str, tuple[datetime, datetime]], stages: list[dict], samples: list[tuple[datetime, int]]
) -> None:
    """Add ``peak_rss_mb`` to each stage: the build's highest sampled RSS while the stage ran
    (``stage_windows``).  Stages run two at a time, so the figure is the whole build's memory in that
    window, not the stage's own."""
    for stage in stages:
        start, end = windows.get(stage.get("unique_id"), (None, None))
        inside = [rss for at, rss in samples if start and start <= at <= end]
        stage["peak_rss_mb"] = round(max(inside) / 1e6) if inside else None


def _gb(value: int | float) -> str:
    return f"{value / 1e9:.2f} GB"


def format_results(results: list[dict], settings: dict) -> str:
    lines = [
        "scale benchmark: full dbt build (tests, outputs, published database), "
        f"threads {settings['threads']}, DuckDB memory limit {settings['memory_limit']}, "
        f"peak RSS via {settings['rss_method']}, published database "
        f"{'on' if settings['published_copy'] else 'off (--no-publish)'}",
        "",
        f"{'documents':>11} {'input':>9} {'wall s':>8} {'x prev':>6} {'CPU s':>8} {'peak RSS':>9} "
        f"{'disk peak':>10} {'/input':>6} {'database':>9} {'spill':>9} {'outputs':>9} {'published':>9}",
    ]
    previous = None
    for item in results:
        dbt, peaks = item["dbt"], item["disk_peaks"]
        ok = dbt["returncode"] == 0
        ratio = f"{dbt['wall_seconds'] / previous:6.2f}" if previous and ok else f"{'-':>6}"
        lines.append(
            f"{item['documents']:>11,} {_gb(item['input_bytes']):>9} {dbt['wall_seconds']:8.2f} {ratio} "
            f"{dbt.get('cpu_seconds') or 0:8.1f} "
            f"{(dbt['peak_rss_mb'] or 0) / 1e3:7.2f}GB {_gb(item['disk_peak_total']):>10} "
            f"{item['disk_peak_total'] / item['input_bytes']:6.2f} {_gb(peaks['database']):>9} "
            f"{_gb(peaks['spill']):>9} {_gb(peaks['outputs']):>9} {_gb(peaks['published']):>9}"
            + ("" if ok else f"  FAILED (exit {dbt['returncode']}) {item.get('disk_guard', '')}")
            + ("" if item.get("corpus", "generated") == "generated" else f"  {item['corpus']}")
        )
        previous = dbt["wall_seconds"] if ok else None
    lines.append(
        "disk peak: database + spill + outputs + published database at their joint peak (sampled every "
        f"{SAMPLE_SECONDS} s); each part's column is its own peak; /input = disk peak / input Parquet size"
    )
    for item in results:
        if item.get("disk_peak_parts"):
            parts = ", ".join(f"{name} {_gb(value)}" for name, value in item["disk_peak_parts"].items())
            during = ", ".join(item.get("disk_peak_during") or []) or "-"
            lines.append(f"joint disk peak at {item['documents']:,}: {parts}; while running: {during}")
    for item in results:
        rensa = item.get("rensa")
        if rensa:
            speedup = item.get("rensa_over_dbt_wall")
            lines.append(
                f"rensa at {item['documents']:,}: {rensa['wall_seconds']:.2f} s wall, "
                f"{(rensa['peak_rss_mb'] or 0) / 1e3:.2f} GB peak RSS"
                + (f" -> dbt is {speedup:.2f}x faster" if speedup else "  (failed or not comparable)")
            )
    names = []
    for item in results:
        for stage in item["dbt"].get("stages", []):
            if stage["name"] not in names:
                names.append(stage["name"])
    lines += [
        "",
        f"  {'stage seconds, CPU s (GB)':<28}" + "".join(f"{item['documents']:>28,}" for item in results),
    ]
    for name in names:
        row = []
        for item in results:
            found = next((s for s in item["dbt"].get("stages", []) if s["name"] == name), None)
            rss = found and found.get("peak_rss_mb")
            row.append(
                f"{found['seconds']:12.2f}{found.get('cpu_seconds', 0):8.1f}"
                + (f" ({rss / 1e3:5.2f})" if rss else " " * 8)
                if found
                else f"{'-':>28}"
            )
        lines.append(f"  {name:<28}" + "".join(row))
    for label, key, cpu_key in (
        ("tests (summed)", "test_seconds", "test_cpu_seconds"),
        ("dbt elapsed", "elapsed_seconds", None),
    ):
        lines.append(
            f"  {label:<28}"
            + "".join(
                f"{item['dbt'].get(key) or 0:12.2f}"
                + (f"{item['dbt'].get(cpu_key) or 0:8.1f}" if cpu_key else " " * 8)
                + " " * 8
                for item in results
            )
        )
    lines.append(
        "  CPU s: the build's CPU in the stage's window, split evenly with a stage beside it (stage_cpu.py);"
        " peak RSS: the whole build's, sampled while the stage ran (two stages run at once)"
    )
    return "\n".join(lines)


def cost_curve_svg(results: list[dict]) -> str:
    """Wall seconds and peak RSS (GB) against documents on log-log axes, with rensa's point(s) and a
    slope-one line (linear cost) through the smallest size's build."""
    done = [item for item in results if item["dbt"]["returncode"] == 0]
    width, height, left, right, top, bottom = 640, 360, 70, 150, 40, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [(item["documents"], item["dbt"]["wall_seconds"]) for item in done]
    rensa = [
        (item["documents"], item["rensa"]["wall_seconds"])
        for item in done
        if item.get("rensa") and item["rensa"]["returncode"] == 0
    ]
    rss = [(item["documents"], (item["dbt"]["peak_rss_mb"] or 0) / 1e3) for item in done]
    xs = [x for x, _ in points + rensa] or [1, 10]
    ys = [y for _, y in points + rensa + rss if y > 0] or [1, 10]
    x_lo, x_hi = 10 ** math.floor(math.log10(min(xs))), 10 ** math.ceil(math.log10(max(xs)))
    y_lo, y_hi = 10 ** math.floor(math.log10(min(ys))), 10 ** math.ceil(math.log10(max(ys)))
    x_hi = max(x_hi, x_lo * 10)
    y_hi = max(y_hi, y_lo * 10)

    def sx(x: float) -> float:
        return left + plot_w * (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo))

    def sy(y: float) -> float:
        return top + plot_h * (1 - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="14">Full dbt build: cost against corpus size (log-log)</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>',
    ]
    exponent = math.log10(x_lo)
    while 10**exponent <= x_hi * 1.0001:
        x = sx(10**exponent)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{10**exponent:,.0f}</text>'
        )
        exponent += 1
    exponent = math.log10(y_lo)
    while 10**exponent <= y_hi * 1.0001:
        y = sy(10**exponent)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{10**exponent:g}</text>')
        exponent += 1
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">documents</text>')
    if points:
        x0, y0 = points[0]
        x1 = x_hi
        y1 = y0 * x1 / x0
        if y1 > y_hi:
            x1, y1 = x0 * y_hi / y0, y_hi
        out.append(
            f'<line x1="{sx(x0):.1f}" y1="{sy(y0):.1f}" x2="{sx(x1):.1f}" y2="{sy(y1):.1f}" '
            'stroke="#999" stroke-dasharray="4 4"/>'
        )
    series = (
        ("dbt build: wall s", points, "#1f77b4"),
        ("dbt build: peak RSS GB", rss, "#2ca02c"),
        ("rensa: wall s", rensa, "#d62728"),
    )
    for index, (label, data, colour) in enumerate(series):
        if len(data) > 1:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in data)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in data:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{colour}"/>')
            out.append(f'<text x="{sx(x) + 6:.1f}" y="{sy(y) - 6:.1f}" fill="{colour}">{y:.3g}</text>')
        legend_y = top + 14 + 18 * index
        out.append(
            f'<rect x="{left + plot_w + 10}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>'
        )
        out.append(f'<text x="{left + plot_w + 25}" y="{legend_y}">{label}</text>')
    legend_y = top + 14 + 18 * len(series)
    out.append(
        f'<line x1="{left + plot_w + 8}" y1="{legend_y - 4}" x2="{left + plot_w + 22}" y2="{legend_y - 4}" '
        'stroke="#999" stroke-dasharray="4 4"/>'
    )
    out.append(f'<text x="{left + plot_w + 25}" y="{legend_y}">linear cost</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default=",".join(str(size) for size in DEFAULT_SIZES),
        help="comma list of corpus sizes (default 100000,1000000)",
    )
    parser.add_argument(
        "--with-10m", action="store_true", help="also generate and build 10,000,000 documents"
    )
    parser.add_argument(
        "--rensa-at", type=int, default=1_000_000, help="run rensa beside dbt at this size (0: never)"
    )
    parser.add_argument(
        "--corpus",
        action="append",
        type=Path,
        default=[],
        help="build this Parquet corpus (the generator's columns; e.g. from benchmarks/prose_corpus.py) "
        "instead of generated ones; repeatable; rensa runs beside it unless --rensa-at 0",
    )
    parser.add_argument("--seed", type=int, default=rb.generate_corpus.DEFAULT_SEED)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--memory-limit", default="", help="DEDUP_MEMORY_LIMIT (default: the project's)")
    parser.add_argument("--work", default=str(ROOT / "bench_work" / "scale"))
    parser.add_argument(
        "--svg", help="cost curve picture (default docs/benchmarks_cost_curve.svg; none with --corpus)"
    )
    parser.add_argument("--json", help="write all figures to this JSON file")
    parser.add_argument("--rss", choices=("auto", "time", "psutil"), default="auto")
    parser.add_argument(
        "--no-publish", action="store_true", help="DEDUP_PUBLISH_DIR=none: no published database"
    )
    parser.add_argument(
        "--min-free-gb",
        type=float,
        default=8.0,
        help="stop a build when the disk's free space falls below this (default 8 GB; 0: never)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    sizes = sorted({int(size) for size in args.sizes.split(",") if size.strip()})
    if args.with_10m:
        sizes = sorted({*sizes, TEN_MILLION})
    if not sizes or sizes[0] <= 0:
        raise SystemExit("--sizes must be positive numbers")
    rss_method = rb.resolve_rss_method(args.rss)
    settings = {
        "threads": args.threads,
        "memory_limit": args.memory_limit or f"project default ({rb.project_memory_limit()})",
        "rss_method": "/usr/bin/time -v" if rss_method == "time" else "psutil",
        "published_copy": not args.no_publish,
    }
    results = []
    runs = [(0, path.resolve()) for path in args.corpus] or [(docs, None) for docs in sizes]
    for docs, given in runs:
        results.append(run_size(docs, args, rss_method, given))
        print(format_results(results, settings), file=sys.stderr, flush=True)
    report = {"settings": settings, "sizes": results}
    print(format_results(results, settings))
    if args.svg is None and not args.corpus:
        args.svg = str(ROOT / "docs" / "benchmarks_cost_curve.svg")
    if args.svg:
        Path(args.svg).parent.mkdir(parents=True, exist_ok=True)
        Path(args.svg).write_text(cost_curve_svg(results), encoding="utf-8")
        print(f"cost curve written to {args.svg}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rb._jsonable(report), indent=2) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    return 1 if any(item["dbt"]["returncode"] != 0 for item in results) else 0


if __name__ == "__main__":
    sys.exit(main())
