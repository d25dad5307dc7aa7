"""The code's shape: small modules without import circles, and facts kept in one place."""

from __future__ import annotations

import ast
import re

from tests.python.helpers.dbt_runner import PROJECT_ROOT
from tests.python.helpers.project import project_vars
from webdedup.core import reference

PACKAGE = PROJECT_ROOT / "webdedup"
MAX_LINES = 400


def module_name(path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_imports(path) -> set[str]:
    """The webdedup modules a module imports (at any depth of its code)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(name for name in names if name.startswith("webdedup"))
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {m for m in project_imports(path) if m in modules and m != name}
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, found by depth-first search (each reported once, from its smallest module)."""
    found = []

    def visit(start, node, path):
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                found.append([*path, start])
            elif nxt not in path and nxt > start:
                visit(start, nxt, [*path, nxt])

    for start in sorted(graph):
        visit(start, start, [start])
    return found


def test_no_import_circle_in_webdedup():
    graph = import_graph()
    assert "webdedup.core.fingerprint" in graph["webdedup.core.stream"]  # the scan sees imports
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_over_400_lines():
    sizes = {
        str(p.relative_to(PROJECT_ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}


def test_kernels_know_nothing_of_their_callers():
    """The compiled kernels import only each other (blake2b, words), never the code that calls them."""
    assert project_imports(PACKAGE / "core" / "blake2b.py") == set()
    assert project_imports(PACKAGE / "core" / "words.py") == set()
    assert {
        m
        for m in project_imports(PACKAGE / "core" / "kernels.py")
        if not m.startswith(("webdedup.core.blake2b", "webdedup.core.words"))
    } == set()


def test_core_does_not_depend_on_engines_or_outputs():
    for path in (PACKAGE / "core").glob("*.py"):
        assert {m for m in project_imports(path) if not m.startswith("webdedup.core")} == set(), path.name


def test_project_defaults_are_the_specifications():
    variables = project_vars()
    default = variables["presets"][variables["preset"]]
    assert variables["shingle_size"] == reference.SHINGLE_SIZE
    assert variables["seed"] == reference.MINHASH_SEED
    assert variables["threshold"] == reference.SHINGLE_JACCARD_THRESHOLD
    assert (default["num_hashes"], default["rows_per_band"]) == (
        reference.MINHASH_VALUES,
        reference.LSH_ROWS_PER_BAND,
    )


def test_the_manifest_refs_exactly_the_exported_models():
    source = (PROJECT_ROOT / "models" / "marts" / "run_manifest.py").read_text(encoding="utf-8")
    exported = source[source.index("exported={") : source.index("}", source.index("exported={"))]
    refs = re.findall(r'"(\w+)": dbt\.ref\("(\w+)"\)', exported)
    assert all(key == model for key, model in refs)
    assert [model for _, model in refs] == [
        name for name in project_vars()["output_files"] if name != "run_manifest"
    ]


def test_every_mart_is_an_output_file():
    marts = {
        path.stem
        for path in (PROJECT_ROOT / "models" / "marts").glob("*.*")
        if path.suffix in (".sql", ".py")
    }
    assert marts == set(project_vars()["output_files"])
