"""The SVG pictures (webdedup/pictures.py): what is drawn follows from the inputs; the fixture run draws its
own tables, writes them with its outputs and publishes them to the docs assets."""

import math
import random
import xml.etree.ElementTree as ET

import pyarrow as pa
import pytest

from webdedup.outputs import pictures
from webdedup.outputs.pictures import jaccard_histogram_svg, render_pictures, s_curve_svg

SVG = "{http://www.w3.org/2000/svg}"
PLOT_WIDTH = pictures.PLOT_RIGHT - pictures.PLOT_LEFT
PLOT_HEIGHT = pictures.PLOT_BOTTOM - pictures.PLOT_TOP


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def _by_class(root: ET.Element, tag: str, css_class: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if e.get("class") == css_class]


def _texts(root: ET.Element) -> list[str]:
    return [e.text or "" for e in root.iter(f"{SVG}text")]


def _threshold_x(root: ET.Element) -> float:
    (line,) = _by_class(root, "line", "threshold")
    assert line.get("x1") == line.get("x2")
    return float(line.get("x1"))


@pytest.mark.parametrize(("bands", "rows", "threshold"), [(8, 8, 0.7), (32, 4, 0.7), (20, 5, 0.85)])
def test_s_curve_points_are_the_banding_probability(bands, rows, threshold):
    grid = [i / 100 for i in range(101)]
    points = [(j, 1 - (1 - j**rows) ** bands) for j in grid]
    root = _parse(s_curve_svg(points, threshold=threshold, bands=bands, rows_per_band=rows))
    (curve,) = _by_class(root, "polyline", "s-curve")
    drawn = [tuple(map(float, pair.split(","))) for pair in curve.get("points").split()]
    assert len(drawn) == len(grid)
    for (x, y), j in zip(drawn, grid, strict=True):
        assert (x - pictures.PLOT_LEFT) / PLOT_WIDTH == pytest.approx(j, abs=1e-4)
        assert (pictures.PLOT_BOTTOM - y) / PLOT_HEIGHT == pytest.approx(1 - (1 - j**rows) ** bands, abs=1e-4)
    assert (_threshold_x(root) - pictures.PLOT_LEFT) / PLOT_WIDTH == pytest.approx(threshold, abs=1e-4)
    (marker,) = _by_class(root, "circle", "at-threshold")
    p_at_threshold = 1 - (1 - threshold**rows) ** bands
    assert (pictures.PLOT_BOTTOM - float(marker.get("cy"))) / PLOT_HEIGHT == pytest.approx(
        p_at_threshold, abs=1e-4
    )
    assert f"P = {p_at_threshold:.2f}" in _texts(root)
    assert f"{bands} bands x {rows} rows" in root.find(f"{SVG}title").text


def test_s_curve_draws_points_in_jaccard_order():
    root = _parse(s_curve_svg([(1.0, 1.0), (0.0, 0.0), (0.5, 0.25)], threshold=0.7, bands=8, rows_per_band=8))
    (curve,) = _by_class(root, "polyline", "s-curve")
    xs = [float(pair.split(",")[0]) for pair in curve.get("points").split()]
    assert xs == sorted(xs) and len(xs) == 3


def test_histogram_bars_are_the_bin_counts():
    jaccards = [0.05, 0.12, 0.12, 0.5, 0.69, 0.7, 0.71, 0.99, 1.0, 1.0, 1.0]
    bins = 10
    expected = [sum(1 for j in jaccards if k / bins <= j < (k + 1) / bins) for k in range(bins)]
    expected[-1] += jaccards.count(1.0)  # J = 1.0 belongs to the last bin
    assert expected == [1, 2, 0, 0, 0, 1, 1, 2, 0, 4]
    root = _parse(jaccard_histogram_svg(jaccards, threshold=0.7, bands=8, rows_per_band=8, bins=bins))
    bars = _by_class(root, "rect", "bar")
    assert len(bars) == bins
    xs = [float(bar.get("x")) for bar in bars]
    assert xs == sorted(xs)
    heights = [float(bar.get("height")) for bar in bars]
    unit = heights[expected.index(max(expected))] / max(expected)
    assert heights == pytest.approx([count * unit for count in expected], abs=0.02)
    for bar in bars:  # every bar stands on the x axis
        assert float(bar.get("y")) + float(bar.get("height")) == pytest.approx(pictures.PLOT_BOTTOM, abs=0.02)
    assert (_threshold_x(root) - pictures.PLOT_LEFT) / PLOT_WIDTH == pytest.approx(0.7, abs=1e-4)
    accepted = sum(1 for j in jaccards if j >= 0.7)
    assert accepted == 6
    subtitle = _texts(root)[1]
    assert f"11 LSH candidates: {accepted} at or above the threshold 0.7" in subtitle
    assert f"{len(jaccards) - accepted} below" in subtitle
    assert "8 bands x 8 rows" in root.find(f"{SVG}title").text


def test_histogram_of_no_candidates_has_empty_bars_and_says_so():
    root = _parse(jaccard_histogram_svg([], threshold=0.7, bands=8, rows_per_band=8))
    bars = _by_class(root, "rect", "bar")
    assert len(bars) == pictures.HISTOGRAM_BINS
    assert all(float(bar.get("height")) == 0 for bar in bars)
    assert "no candidate pairs" in _texts(root)


@pytest.mark.parametrize("value", [0, 0.5, 1, 3, 7, 19.4, 55, 101, 999, 26_336, 1_234_567])
def test_count_axis_covers_the_highest_bar_with_few_round_ticks(value):
    axis_max, step = pictures.nice_axis_max(value)
    assert axis_max >= value and step >= 1
    assert step / 10 ** math.floor(math.log10(step)) in (1, 2, 5)
    assert axis_max / step <= 6 and axis_max == round(axis_max / step) * step


def test_render_pictures_is_deterministic_and_names_the_files():
    arguments = {
        "curve": [(i / 10, (i / 10) ** 2) for i in range(11)],
        "jaccards": [0.3, 0.75, 0.9],
        "threshold": 0.7,
        "bands": 8,
        "rows_per_band": 8,
    }
    first, second = render_pictures(**arguments), render_pictures(**arguments)
    assert first == second
    assert [(row["picture"], row["file_name"]) for row in first] == [
        ("s_curve", "lsh_s_curve.svg"),
        ("candidate_jaccards", "candidate_jaccards.svg"),
    ]
    for row in first:
        _parse(row["svg"])


def test_histogram_bins_every_value_as_the_formula_on_one_float():
    # the bins of a column of millions of pairs are computed at once (numpy); each value must land where
    # floor(J * bins + 1e-9), clamped to the bins, puts one Python float: bin edges, values one ulp either
    # side of them, 0, 1 and random values
    rng = random.Random(5)
    edges = [k / bins for bins in (10, 20) for k in range(bins + 1)] + [0.7, 0.35, 0.15, 0.95]
    near = [math.nextafter(edge, direction) for edge in edges for direction in (0.0, 2.0)]
    values = [min(max(v, 0.0), 1.0) for v in edges + near] + [rng.random() for _ in range(2_000)]
    for bins in (10, 20, 7):
        expected = [0] * bins
        for value in values:
            expected[min(max(math.floor(value * bins + 1e-9), 0), bins - 1)] += 1
        assert pictures.histogram_counts(values, bins) == expected
        chunked = pa.chunked_array([values[:100], values[100:]], pa.float64())
        assert pictures.histogram_counts(chunked, bins) == expected


def test_histogram_of_an_arrow_column_equals_the_list_and_rejects_nulls():
    jaccards = [0.3, 0.75, 0.9, 1.0, 0.0]
    as_list = jaccard_histogram_svg(jaccards, threshold=0.7, bands=8, rows_per_band=8)
    as_column = jaccard_histogram_svg(pa.chunked_array([jaccards]), threshold=0.7, bands=8, rows_per_band=8)
    assert as_list == as_column
    with pytest.raises(ValueError, match=r"1 candidate pair.*null"):
        jaccard_histogram_svg(pa.array([0.5, None]), threshold=0.7, bands=8, rows_per_band=8)
    with pytest.raises(ValueError, match="NaN"):
        jaccard_histogram_svg([0.5, float("nan")], threshold=0.7, bands=8, rows_per_band=8)
