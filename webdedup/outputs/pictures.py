"""Plain-SVG pictures of a run: the LSH S-curve and the histogram of candidate Jaccards.

Pure functions (no plotting library): the ``lsh_pictures`` dbt Python model feeds them the run's own
tables and the docs overview page shows the files.  Both charts share one frame: J from 0 to 1 on the
x axis, the run's threshold as a dashed vertical line, the banding (bands x rows) in the title.  The
output is a deterministic function of the inputs (fixed number formatting, no timestamps), so a rerun
gives byte-identical files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

import numpy as np

WIDTH, HEIGHT = 720, 440
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 80, 690, 70, 370
HISTOGRAM_BINS = 20

CURVE_COLOUR = "#1f77b4"
BAR_COLOUR = "#4c9bd6"
THRESHOLD_COLOUR = "#d62728"
INK, GRID = "#222222", "#dddddd"


def x_position(jaccard: float) -> float:
    """Horizontal pixel of Jaccard J (0 .. 1) in the plot area."""
    return PLOT_LEFT + jaccard * (PLOT_RIGHT - PLOT_LEFT)


def y_position(value: float, y_max: float) -> float:
    """Vertical pixel of a value between 0 and y_max in the plot area."""
    return PLOT_BOTTOM - value / y_max * (PLOT_BOTTOM - PLOT_TOP)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _text(x: float, y: float, content: str, **attributes: str) -> str:
    extra = "".join(f' {name.replace("_", "-")}="{value}"' for name, value in attributes.items())
    return f'<text x="{_num(x)}" y="{_num(y)}"{extra}>{escape(content)}</text>'


def banding_label(bands: int, rows_per_band: int) -> str:
    return f"{bands} bands x {rows_per_band} rows ({bands * rows_per_band} hashes)"


def nice_axis_max(value: float) -> tuple[float, float]:
    """(axis maximum, tick step) for counts up to value: a 1-2-5 step, at most 5 ticks above zero."""
    if value <= 0:
        return 1.0, 1.0
    step = 10 ** math.floor(math.log10(value / 5))
    for factor in (1, 2, 5, 10):
        if value / (factor * step) <= 5:
            step *= factor
            break
    step = max(step, 1.0)
    return math.ceil(value / step) * step, step


def _frame(*, title: str, subtitle: str, y_label: str, y_max: float, y_step: float) -> list[str]:
    """Background, title, grid, axes with ticks and labels."""
    middle = (PLOT_LEFT + PLOT_RIGHT) / 2
    parts = [
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        _text(middle, 28, title, text_anchor="middle", font_size="17", font_weight="bold"),
        _text(middle, 50, subtitle, text_anchor="middle", font_size="13"),
    ]
    for tick in range(11):
        x = x_position(tick / 10)
        parts.append(
            f'<line x1="{_num(x)}" y1="{PLOT_TOP}" x2="{_num(x)}" y2="{PLOT_BOTTOM}" stroke="{GRID}"/>'
        )
        parts.append(_text(x, PLOT_BOTTOM + 18, f"{tick / 10:.1f}", text_anchor="middle"))
    ticks = round(y_max / y_step)
    for tick in range(ticks + 1):
        value = tick * y_step
        y = y_position(value, y_max)
        parts.append(
            f'<line x1="{PLOT_LEFT}" y1="{_num(y)}" x2="{PLOT_RIGHT}" y2="{_num(y)}" stroke="{GRID}"/>'
        )
        parts.append(_text(PLOT_LEFT - 8, y + 4, _num(value), text_anchor="end"))
    parts += [
        f'<line class="axis" x1="{PLOT_LEFT}" y1="{PLOT_BOTTOM}" x2="{PLOT_RIGHT}" y2="{PLOT_BOTTOM}" '
        f'stroke="{INK}"/>',
        f'<line class="axis" x1="{PLOT_LEFT}" y1="{PLOT_TOP}" x2="{PLOT_LEFT}" y2="{PLOT_BOTTOM}" '
        f'stroke="{INK}"/>',
        _text(middle, PLOT_BOTTOM + 44, "Exact Jaccard similarity J", text_anchor="middle", font_size="14"),
        _text(
            22,
            (PLOT_TOP + PLOT_BOTTOM) / 2,
            y_label,
            text_anchor="middle",
            font_size="14",
            transform=f"rotate(-90 22 {_num((PLOT_TOP + PLOT_BOTTOM) / 2)})",
        ),
    ]
    return parts


def _threshold_line(threshold: float) -> list[str]:
    """The dashed vertical line at the threshold with its label (drawn last, on top of the data)."""
    x = x_position(threshold)
    return [
        f'<line class="threshold" x1="{_num(x)}" y1="{PLOT_TOP}" x2="{_num(x)}" y2="{PLOT_BOTTOM}" '
        f'stroke="{THRESHOLD_COLOUR}" stroke-width="2" stroke-dasharray="6 4"/>',
        _text(
            x,
            PLOT_TOP - 6,
            f"threshold {threshold:g}",
            text_anchor="end" if threshold > 0.9 else "middle",  # stays inside the picture near J = 1
            fill=THRESHOLD_COLOUR,
        ),
    ]


def _svg(title: str, parts: list[str]) -> str:
    body = "\n".join(f"  {part}" for part in parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12" fill="{INK}">\n'
        f"  <title>{escape(title)}</title>\n{body}\n</svg>\n"
    )


def candidate_probability(jaccard: float, rows_per_band: int, bands: int) -> float:
    return 1 - (1 - jaccard**rows_per_band) ** bands


def s_curve_svg(
    points: Sequence[tuple[float, float]], *, threshold: float, bands: int, rows_per_band: int
) -> str:
    """The S-curve P(candidate | J) through `points` (J, P), the threshold line and P at the threshold."""
    title = f"LSH S-curve: {banding_label(bands, rows_per_band)}"
    at_threshold = candidate_probability(threshold, rows_per_band, bands)
    subtitle = (
        f"P(candidate | J) = 1 - (1 - J^{rows_per_band})^{bands}; "
        f"a pair at the threshold J = {threshold:g} becomes a candidate with P = {at_threshold:.2f}"
    )
    parts = _frame(title=title, subtitle=subtitle, y_label="P(candidate | J)", y_max=1.0, y_step=0.2)
    coordinates = " ".join(f"{_num(x_position(j))},{_num(y_position(p, 1.0))}" for j, p in sorted(points))
    x, y = x_position(threshold), y_position(at_threshold, 1.0)
    parts += [
        f'<polyline class="s-curve" points="{coordinates}" fill="none" stroke="{CURVE_COLOUR}" '
        f'stroke-width="3"/>',
        *_threshold_line(threshold),
        f'<circle class="at-threshold" cx="{_num(x)}" cy="{_num(y)}" r="5" fill="{THRESHOLD_COLOUR}"/>',
        _text(x + 9, y + 4, f"P = {at_threshold:.2f}", fill=THRESHOLD_COLOUR, font_weight="bold"),
    ]
    return _svg(title, parts)


def jaccard_array(jaccards) -> np.ndarray:
    """The candidate Jaccards as one float64 array: a list, a numpy array or an Arrow (chunked) array, so
    that an engine hands over a column of millions of pairs without a Python float per pair."""
    if hasattr(jaccards, "null_count") and jaccards.null_count:
        raise ValueError(f"lsh_pictures: {jaccards.null_count} candidate pair(s) without a Jaccard (null)")
    values = jaccards.to_numpy() if hasattr(jaccards, "to_numpy") else jaccards
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.isnan(values).any():
        raise ValueError("lsh_pictures: a candidate pair's Jaccard is not a number (NaN)")
    return values


def histogram_counts(jaccards, bins: int = HISTOGRAM_BINS) -> list[int]:
    """Counts in `bins` equal bins [k/bins, (k+1)/bins) of 0 .. 1; J = 1.0 goes to the last bin."""
    values = jaccard_array(jaccards)
    # the same float64 steps as floor(J * bins + 1e-9) on one Python float, for every value at once
    index = np.clip(np.floor(values * bins + 1e-9), 0, bins - 1).astype(np.int64)
    return np.bincount(index, minlength=bins).tolist()


def jaccard_histogram_svg(
    jaccards, *, threshold: float, bands: int, rows_per_band: int, bins: int = HISTOGRAM_BINS
) -> str:
    """Histogram of the candidate pairs' exact Jaccards (``jaccard_array``'s inputs) in `bins` bins, with
    the threshold line."""
    values = jaccard_array(jaccards)
    counts = histogram_counts(values, bins)
    accepted = int(np.count_nonzero(values >= threshold))
    total = len(values)
    title = f"Candidate pairs by exact Jaccard: {banding_label(bands, rows_per_band)}"
    subtitle = (
        f"{total} LSH candidates: {accepted} at or above the threshold {threshold:g} (duplicates), "
        f"{total - accepted} below (rejected); bins of {1 / bins:g}"
    )
    y_max, y_step = nice_axis_max(max(counts) * 1.08)  # headroom for the count above the highest bar
    parts = _frame(title=title, subtitle=subtitle, y_label="candidate pairs", y_max=y_max, y_step=y_step)
    bar_width = (PLOT_RIGHT - PLOT_LEFT) / bins
    for index, count in enumerate(counts):
        top = y_position(count, y_max)
        parts.append(
            f'<rect class="bar" x="{_num(x_position(index / bins) + 1)}" y="{_num(top)}" '
            f'width="{_num(bar_width - 2)}" height="{_num(PLOT_BOTTOM - top)}" fill="{BAR_COLOUR}">'
            f"<title>J in [{index / bins:g}, {(index + 1) / bins:g}): {count}</title></rect>"
        )
        if count:
            parts.append(_text(x_position((index + 0.5) / bins), top - 5, str(count), text_anchor="middle"))
    if not total:
        parts.append(_text((PLOT_LEFT + PLOT_RIGHT) / 2, (PLOT_TOP + PLOT_BOTTOM) / 2, "no candidate pairs"))
    parts += _threshold_line(threshold)
    return _svg(title, parts)


PICTURES = (
    ("s_curve", "lsh_s_curve.svg"),
    ("candidate_jaccards", "candidate_jaccards.svg"),
)


def render_pictures(
    *,
    curve: Sequence[tuple[float, float]],
    jaccards,
    threshold: float,
    bands: int,
    rows_per_band: int,
) -> list[dict[str, str]]:
    """One row per picture (picture, file_name, svg) from the S-curve points and the candidate Jaccards."""
    banding = {"threshold": threshold, "bands": bands, "rows_per_band": rows_per_band}
    svgs = {
        "s_curve": s_curve_svg(curve, **banding),
        "candidate_jaccards": jaccard_histogram_svg(jaccards, **banding),
    }
    return [{"picture": name, "file_name": file_name, "svg": svgs[name]} for name, file_name in PICTURES]
