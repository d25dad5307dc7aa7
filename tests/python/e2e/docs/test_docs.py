"""The docs: `dbt docs generate` describes every model, seed and column (of the fixture run) and the
lineage reaches every output from the seed (the pages themselves: tests/python/unit/test_docs_pages.py)."""

import json

import pytest

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt


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
