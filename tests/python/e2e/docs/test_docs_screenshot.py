"""The docs in a real browser: `dbt docs generate` for the fixture run, served on localhost, opened in
headless Chromium.  The overview page shows both pictures and the lineage page draws the graph; the
screenshots stay in target/test-run/ (docs-overview.png, docs-lineage.png) for people to look at.

Chromium is required: CI installs Debian's `chromium` (.ci/run).  Without it these tests fail and say how
to install it; DEDUP_SKIP_BROWSER_TESTS=1 explicitly turns that failure into a skip.  CHROMIUM=/path
picks another binary.  The PNG screenshots are decoded with the standard library (zlib) and checked by
their colours, so a blank, white or still-loading page fails.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import zlib
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt
from webdedup.outputs import pictures

pytestmark = pytest.mark.dbt

SHOTS = PROJECT_ROOT / "target" / "test-run"
PICTURE_FILES = [file_name for _, file_name in pictures.PICTURES]
OVERVIEW_URL = "index.html#!/overview"
# dbt docs opens a model's page with the full-screen lineage graph of the project when g_v=1
LINEAGE_URL = "index.html#!/model/model.web_text_dedup.clusters?g_v=1"
# Colours of dbt docs' lineage graph: its background, SQL model nodes, Python model nodes, exposures
GRAPH_BACKGROUND = (0x00, 0x5E, 0x7A)
MODEL_NODE = (0x00, 0x94, 0xB3)
PYTHON_NODE = (0x6A, 0x5A, 0xCD)
EXPOSURE_NODE = (0xFF, 0x69, 0x4B)


def _hex_rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def find_chromium() -> str:
    """The Chromium binary ($CHROMIUM, chromium or chromium-browser on PATH, /usr/bin/chromium)."""
    for candidate in (
        os.environ.get("CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        "/usr/bin/chromium",
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    message = (
        "Chromium not found (looked for $CHROMIUM, chromium and chromium-browser on PATH, "
        "/usr/bin/chromium). "
        "Install Debian's: `apt-get install -y --no-install-recommends chromium` (CI does this in .ci/run), "
        "or set CHROMIUM=/path/to/chromium; set DEDUP_SKIP_BROWSER_TESTS=1 to skip the browser tests instead."
    )
    if os.environ.get("DEDUP_SKIP_BROWSER_TESTS") == "1":
        pytest.skip(message)
    pytest.fail(message)


def headless(chromium: str, url: str, *arguments: str, window: str = "1400,900") -> str:
    """Run headless Chromium on url (a fresh profile, no network but localhost); returns its stdout."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={window}",
            "--virtual-time-budget=15000",  # let the docs app load manifest/catalog and lay out the graph
            *arguments,
            url,
        ]
        result = subprocess.run(command, capture_output=True, text=True, timeout=180)
    if result.returncode != 0:
        raise AssertionError(f"chromium exited with {result.returncode}:\n{result.stderr[-3000:]}")
    return result.stdout


def screenshot(chromium: str, url: str, path: Path, window: str) -> tuple[int, int, collections.Counter]:
    path.unlink(missing_ok=True)
    headless(chromium, url, f"--screenshot={path}", window=window)
    assert path.exists(), f"chromium wrote no screenshot to {path}"
    return colour_counts(path)


def read_png(path: Path) -> tuple[int, int, int, list[bytes]]:
    """(width, height, channels, rows of pixel bytes) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    position, compressed, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        chunk = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            compressed.append(chunk)
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(compressed))
    stride = width * channels
    previous, rows = bytearray(stride), []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif kind == 2:  # Up
            line = bytearray((x + y) & 255 for x, y in zip(line, previous, strict=True))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a, c = (line[i - channels], previous[i - channels]) if i >= channels else (0, 0)
                b = previous[i]
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def colour_counts(path: Path) -> tuple[int, int, collections.Counter]:
    """(width, height, pixels per RGB colour) of a PNG."""
    width, height, channels, rows = read_png(path)
    counts = collections.Counter()
    for row in rows:
        counts.update(zip(row[0::channels], row[1::channels], row[2::channels], strict=True))
    return width, height, counts


def pixels_near(counts: collections.Counter, colour: tuple[int, int, int], tolerance: int = 12) -> int:
    return sum(
        n for c, n in counts.items() if max(abs(x - y) for x, y in zip(c, colour, strict=True)) <= tolerance
    )


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # quiet; requests are recorded instead
        self.server.requests.append((self.path.split("?")[0], args[1] if len(args) > 1 else ""))


@pytest.fixture(scope="module")
def chromium():
    return find_chromium()


@pytest.fixture(scope="module")
def docs_site(fixture_run):
    """`dbt docs generate` for the fixture run's database into target/test-run/docs-site."""
    site = SHOTS / "docs-site"
    shutil.rmtree(site, ignore_errors=True)
    run_dbt(
        ["docs", "generate", "--target-path", str(site)],
        db_path=fixture_run["db_path"],
        dbt_vars={"output_dir": str(fixture_run["work"] / "docs-unused")},
    )
    return site


@pytest.fixture(scope="module")
def served_docs(docs_site):
    """The docs site on http://127.0.0.1:<free port>/; .requests lists (path, status) of every request."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(docs_site)))
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server, page: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/{page}"


def test_docs_generate_copies_the_pictures_and_the_overview_embeds_them(docs_site):
    for file_name in PICTURE_FILES:
        copied = docs_site / "assets" / file_name
        assert copied.read_bytes() == (PROJECT_ROOT / "assets" / file_name).read_bytes()
    manifest = json.loads((docs_site / "manifest.json").read_text())
    overview = manifest["docs"]["doc.web_text_dedup.__overview__"]["block_contents"]
    for file_name in PICTURE_FILES:
        assert f"](assets/{file_name})" in overview, f"the overview does not embed {file_name}"


def test_overview_page_shows_both_pictures(served_docs, chromium):
    served_docs.requests.clear()
    dom = headless(chromium, _url(served_docs, OVERVIEW_URL), "--dump-dom")
    for file_name in PICTURE_FILES:
        assert f'src="assets/{file_name}"' in dom
    width, height, counts = screenshot(
        chromium, _url(served_docs, OVERVIEW_URL), SHOTS / "docs-overview.png", window="1400,3000"
    )
    assert (width, height) == (1400, 3000)
    for file_name in PICTURE_FILES:
        assert (f"/assets/{file_name}", "200") in served_docs.requests, served_docs.requests
    # the pictures are drawn: the S-curve, the histogram's bars and both dashed threshold lines
    assert pixels_near(counts, _hex_rgb(pictures.CURVE_COLOUR)) > 500
    assert pixels_near(counts, _hex_rgb(pictures.BAR_COLOUR)) > 2000
    assert pixels_near(counts, _hex_rgb(pictures.THRESHOLD_COLOUR)) > 400


def test_lineage_screenshot_shows_the_graph(served_docs, chromium):
    served_docs.requests.clear()
    dom = headless(chromium, _url(served_docs, LINEAGE_URL), "--dump-dom")
    assert "Lineage Graph" in dom
    assert 'data-id="layer2-node"' in dom, "no cytoscape node layer: the lineage graph was not drawn"
    path = SHOTS / "docs-lineage.png"
    width, height, counts = screenshot(chromium, _url(served_docs, LINEAGE_URL), path, window="1400,900")
    requested = {request for request, _ in served_docs.requests}
    assert {"/manifest.json", "/catalog.json"} <= requested, served_docs.requests
    total = width * height
    # the full-screen graph: its background fills most of the picture (a blank or loading page is white)
    assert pixels_near(counts, GRAPH_BACKGROUND, tolerance=2) / total > 0.5, f"see {path}"
    # the 4 exposures, many more SQL model nodes than exposures, and the Python models (int_fingerprints,
    # lsh_pictures, run_manifest, ...).  The graph is zoomed to fit the window, so how many pixels a node
    # covers changes with the project's layout: model and Python nodes are counted against the exposures,
    # whose long labels make wide boxes (with 26 SQL models and 4 exposures: 969 px of model nodes against
    # 255 px of exposures; a page without model nodes has none).
    exposure_pixels = pixels_near(counts, EXPOSURE_NODE, tolerance=2)
    assert exposure_pixels > 40, f"no exposure nodes drawn, see {path}"
    model_pixels = pixels_near(counts, MODEL_NODE, tolerance=2)
    assert model_pixels > 2 * exposure_pixels, f"too few model nodes drawn ({model_pixels} px), see {path}"
    python_pixels = pixels_near(counts, PYTHON_NODE, tolerance=2)
    assert python_pixels > exposure_pixels / 4, f"no Python nodes drawn ({python_pixels} px), see {path}"
    assert len(counts) > 200, f"too few colours for a graph with labels and edges, see {path}"
