"""The docs: `dbt docs generate` describes every model, seed and column (of the fixture run) and the
lineage reaches every output from the seed; the README stays short, every relative link in the README
and `docs/` resolves (file and heading), and every test named in `docs/guarantees.md` exists."""

import json
import re
from pathlib import Path

import pytest

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt

README = PROJECT_ROOT / "README.md"
PAGES = [README, *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def docs(fixture_run):
    run_dbt(["docs", "generate"], db_path=fixture_run["db_path"], dbt_vars={"output_dir": "target/unused"})
    manifest = json.loads((PROJECT_ROOT / "target" / "manifest.json").read_text())
    catalog = json.loads((PROJECT_ROOT / "target" / "catalog.json").read_text())
    return manifest, catalog


@pytest.mark.dbt
def test_every_node_and_column_is_documented(docs):
    manifest, catalog = docs
    missing = []
    for unique_id, node in manifest["nodes"].items():
        if node["resource_type"] not in ("model", "seed"):
            continue
        if not node["description"].strip():
            missing.append(unique_id)
        documented = {name.lower() for name, col in node["columns"].items() if col["description"].strip()}
        for column in catalog["nodes"].get(unique_id, {}).get("columns", {}):
            if column.lower() not in documented:
                missing.append(f"{unique_id}.{column}")
    assert missing == []


@pytest.mark.dbt
def test_lineage_runs_from_the_seed_to_every_output(docs):
    manifest, _ = docs
    children = manifest["child_map"]
    reached, frontier = set(), ["seed.web_text_dedup.documents"]
    while frontier:
        node = frontier.pop()
        for child in children.get(node, []):
            if child not in reached:
                reached.add(child)
                frontier.append(child)
    outputs = [
        "fingerprinted",
        "candidate_summary",
        "scored_pairs",
        "duplicate_pairs",
        "clusters",
        "cluster_inspection",
        "deduped_documents",
        "run_manifest",
    ]
    assert {f"model.web_text_dedup.{name}" for name in outputs} <= reached
    exposures = {e for e in manifest["exposures"]}
    assert "exposure.web_text_dedup.deduplicated_corpus" in exposures


def _without_code(text: str) -> str:
    """The markdown outside fenced code blocks and inline code."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(
        r"^#{1,6} +(.+?) *$", re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M), re.M
    )
    return {re.sub(r"[^\w\- ]", "", h.replace("`", "").lower()).replace(" ", "-") for h in headings}


def test_readme_is_at_most_150_lines():
    assert len(README.read_text().splitlines()) <= 150


def test_every_relative_link_resolves_to_a_file_and_heading():
    broken = []
    for page in PAGES:
        # A dbt docs page is shown by `dbt docs serve` from target/, where `asset-paths` land: its links
        # resolve from the project root; every other page is read on GitHub, from its own folder.
        base = PROJECT_ROOT if "{% docs " in page.read_text() else page.parent
        for target in LINK.findall(_without_code(page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (base / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_every_test_in_the_guarantees_table_exists():
    rows = [
        line
        for line in (PROJECT_ROOT / "docs" / "guarantees.md").read_text().splitlines()
        if line.startswith("| ")
    ]
    assert rows[0].split("|")[1:3] == [" promise ", " test "]
    missing, named = [], 0
    for row in rows[2:]:
        cells = row.split(" | ")
        assert len(cells) == 2, row
        for name in re.findall(r"`([^`]+)`", cells[1]):
            named += 1
            path, _, test = name.partition("::")
            file = PROJECT_ROOT / path
            if not file.is_file() or (
                test and not re.search(rf"^def {re.escape(test)}\(", file.read_text(), re.M)
            ):
                missing.append(name)
    assert named >= len(rows) - 2
    assert missing == []
