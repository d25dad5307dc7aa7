"""The docs pages: the README stays short and lists exactly the output files, every relative link in the
README and `docs/` resolves (file and heading), and every test named in `docs/guarantees.md` exists."""

import re
from pathlib import Path

from tests.python.helpers.dbt_runner import PROJECT_ROOT
from tests.python.helpers.project import manifest_outputs

README = PROJECT_ROOT / "README.md"
PAGES = [README, *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


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


def test_the_readme_lists_exactly_the_output_files():
    """The README's outputs table names each file of var output_files and lsh_pictures once."""
    text = README.read_text()
    section = text[text.index("## What you get") :]
    section = section[: section.index("\n## ", 4)]
    named = [
        name
        for row in section.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([^`]+\.\w+)`", row.split(" | ")[0])
    ]
    assert sorted(named) == sorted([*manifest_outputs(), "manifest.json"])
