"""Facts of the dbt project the tests read from their one source (dbt_project.yml, pictures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.python.helpers.dbt_runner import PROJECT_ROOT
from webdedup.outputs.pictures import PICTURES


def project_vars() -> dict:
    """The vars of dbt_project.yml (the pipeline's defaults)."""
    with open(PROJECT_ROOT / "dbt_project.yml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["vars"]


def manifest_outputs() -> list[str]:
    """The files manifest.json lists, in its order: the exported tables (var output_files, without the
    manifest itself), then the pictures by file name."""
    tables = [entry["file"] for entry in project_vars()["output_files"].values()]
    return [name for name in tables if name != "manifest.json"] + sorted(name for _, name in PICTURES)


def data_tests(target_dir: Path) -> set[str]:
    """The unique ids of every data test a dbt invocation's manifest (in its target folder) runs: the
    enabled ones (the tests of a disabled model, such as the audit's, stay in the manifest, disabled)."""
    nodes = json.loads((target_dir / "manifest.json").read_text())["nodes"]
    tests = (uid for uid, node in nodes.items() if node["resource_type"] == "test")
    return {uid for uid in tests if nodes[uid]["config"]["enabled"]}


def models_off_on(engine: str) -> set[str]:
    """The models the YAML files switch off on one engine (`enabled: "{{ target.type != '<engine>' }}"`),
    such as the shingle-set tables only Spark stores."""
    switch = f"target.type != '{engine}'"
    off = set()
    for path in (PROJECT_ROOT / "models").rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
            if switch in str(model.get("config", {}).get("enabled", "")):
                off.add(model["name"])
    return off
