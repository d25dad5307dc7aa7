"""The pinned package sets of requirements/ (issue 15: a lean install).

base (installed by `make run`) holds only what the DuckDB pipeline needs; spark, test and bench each add
to it.  Each set, with base, must be closed under the dependencies its packages declare (read from
the installed distributions' metadata) and every pin must satisfy what its dependents ask for, so
`pip install -r requirements/<set>.txt` resolves from the pins alone.
"""

from __future__ import annotations

import re
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.python.helpers.dbt_runner import PROJECT_ROOT

REQUIREMENTS = PROJECT_ROOT / "requirements"
SETS = ("base", "spark", "test", "bench")


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (REQUIREMENTS / f"{name}.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line == "-r base.txt":
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
        assert match, f"requirements/{name}.txt: not an exact pin: {line!r}"
        pins[canonicalize_name(match[1])] = match[2]
    return pins


def test_the_sets_are_disjoint_and_the_root_file_installs_all_of_them():
    pins = {name: _pins(name) for name in SETS}
    seen: dict[str, str] = {}
    for name, packages in pins.items():
        for package in packages:
            assert package not in seen, f"{package} is pinned in both {seen[package]} and {name}"
            seen[package] = name
    root = [
        line
        for line in (PROJECT_ROOT / "requirements.txt").read_text().splitlines()
        if line and line[0] != "#"
    ]
    assert root == [f"-r requirements/{name}.txt" for name in SETS]
    for name in SETS[1:]:
        assert "-r base.txt" in (REQUIREMENTS / f"{name}.txt").read_text().splitlines()


def test_base_holds_none_of_the_extras():
    base = _pins("base")
    for package in (
        "pyspark",
        "dbt-spark",
        "pandas",
        "scipy",
        "pytest",
        "ruff",
        "sqlfluff",
        "datasketch",
        "rensa",
    ):
        assert package not in base, package
    assert {"dbt-core", "dbt-duckdb", "duckdb", "pyarrow", "numba", "fastwarc", "resiliparse"} <= set(base)


@pytest.mark.parametrize("name", SETS)
def test_each_set_is_closed_under_its_dependencies(name):
    pinned = {**_pins("base"), **_pins(name)}
    for package, version in pinned.items():
        try:
            distribution = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{package} is not installed in this venv (install requirements/{name}.txt)")
        assert distribution.version == version, (
            f"{package}: pinned {version}, installed {distribution.version}"
        )
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            dependency = canonicalize_name(requirement.name)
            assert dependency in pinned, f"{package} needs {requirement}, not pinned in base + {name}"
            assert requirement.specifier.contains(pinned[dependency], prereleases=True), (
                f"{package} needs {requirement}; {name} pins {dependency}=={pinned[dependency]}"
            )
