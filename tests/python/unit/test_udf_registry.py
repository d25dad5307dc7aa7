"""The registry of webdedup_* SQL functions (webdedup/engines/udfs.py) against the macros that call them."""

from __future__ import annotations

import re

from tests.python.helpers.dbt_runner import PROJECT_ROOT
from webdedup.engines import udfs

MACRO = re.compile(r"{%-?\s*macro\s+(\w+)\s*\((.*?){%-?\s*endmacro\s*-?%}", re.S)
CALL = re.compile(r"\b(webdedup_\w+)\s*\(")


def engines_running(macro_name: str) -> frozenset[str]:
    """The engines on which a macro's body can run: duckdb__x and spark__x on theirs, every other macro
    (a dispatcher, a default__ version, a plain macro) on both."""
    for engine in udfs.BOTH:
        if macro_name.startswith(f"{engine}__"):
            return frozenset({engine})
    return udfs.BOTH


def unregistered_calls(sql_files) -> list[str]:
    """Every webdedup_* call in the macros and SQL models given whose function the registry does not
    register for an engine that runs the calling macro, as "file:macro calls function on engine"."""
    registered = {engine: {udf.name for udf in udfs.for_engine(engine)} for engine in udfs.BOTH}
    problems = set()
    for path in sql_files:
        text = path.read_text(encoding="utf-8")
        for name, body in MACRO.findall(text) or [(path.stem, text)]:
            for function in CALL.findall(body):
                for engine in engines_running(name):
                    if function not in registered[engine]:
                        problems.add(f"{path.name}:{name} calls {function} on {engine}")
    return sorted(problems)


def project_sql_files():
    return sorted([*(PROJECT_ROOT / "macros").rglob("*.sql"), *(PROJECT_ROOT / "models").rglob("*.sql")])


def test_every_function_a_macro_calls_is_registered_for_the_engines_that_run_it():
    files = project_sql_files()
    assert any(CALL.search(path.read_text(encoding="utf-8")) for path in files)  # the scan finds calls
    assert unregistered_calls(files) == []


def test_a_call_to_an_unregistered_function_is_caught(tmp_path):
    macro = tmp_path / "probe.sql"
    macro.write_text(
        "{% macro spark__probe(x) %} select webdedup_publish_database(x, 'y') {% endmacro %}\n"
        "{% macro duckdb__probe(x) %} select webdedup_publish_database(x, 'y') {% endmacro %}\n"
        "{% macro probe_both(x) %} select webdedup_no_such_function(x) {% endmacro %}\n",
        encoding="utf-8",
    )
    assert unregistered_calls([macro]) == [
        "probe.sql:probe_both calls webdedup_no_such_function on duckdb",
        "probe.sql:probe_both calls webdedup_no_such_function on spark",
        "probe.sql:spark__probe calls webdedup_publish_database on spark",
    ]


def test_registry_names_and_types_are_well_formed():
    names = [udf.name for udf in udfs.UDFS]
    assert len(names) == len(set(names))
    for udf in udfs.UDFS:
        assert udf.name.startswith("webdedup_") and udf.engines and udf.engines <= udfs.BOTH
        # a function that takes the connection gets it as its first argument (the plugin binds it)
        assert udf.function.__code__.co_argcount == len(udf.arguments) + udf.takes_connection, udf.name
        for engine in udf.engines:
            udf.sql_types(engine)  # every type has a name on every engine that registers it


def test_docs_page_is_generated_from_the_registry():
    page = PROJECT_ROOT / "docs" / "udfs.md"
    assert page.read_text(encoding="utf-8") == udfs.docs_markdown(), (
        "docs/udfs.md is stale: .venv/bin/python -m webdedup.engines.udfs > docs/udfs.md"
    )
