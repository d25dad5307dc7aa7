"""The database explains itself (issue 15): what an analyst sees after `dbt build`.

* Every table, view and column of the published database carries its YAML description as a comment;
  the results (marts, diagnostics) are in `main`, the internals in `main_internal`, the seeds in
  `main_raw`.
* The build ends with a summary of the fixture's numbers and where the files and the database are.
* `explain_pair` reads the published database by default and names it; a missing argument is named.
* `python -m webdedup.outputs.sql_shell` (make sql) prints every column and row of a result.
* On an input without labeled pairs, labeled_pair_metrics says so instead of reporting zeros; with
  `fingerprint_detail: full`, fingerprinted.parquet holds the spec's normalized text and shingles.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.python.helpers.dbt_runner import PROJECT_ROOT, run_dbt
from tests.python.helpers.project import models_off_on
from webdedup.core import reference as ref

pytestmark = pytest.mark.dbt


def _published(fixture_run) -> Path:
    return fixture_run["work"] / "published" / "dedup.duckdb"


def _models_in(folder: str) -> set[str]:
    """Model names from the files of a models/ folder (an independent list of what dbt builds)."""
    root = PROJECT_ROOT / "models" / folder
    names = {p.stem for p in root.rglob("*") if p.suffix in (".sql", ".py")}
    disabled = {"warc_read_report", "audit_lsh_recall", "audit_pair_jaccards", "stg_warc_records"}
    return names - disabled - models_off_on("duckdb") - {"int_fingerprint_details"}


def _yaml_descriptions() -> dict[tuple[str, str | None], str]:
    """(model, column or None) -> description, for descriptions written out in the YAML files."""
    found = {}
    for path in (PROJECT_ROOT / "models").rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
            found[(model["name"], None)] = model.get("description", "")
            for column in model.get("columns", []):
                found[(model["name"], column["name"])] = column.get("description", "")
    return {key: text for key, text in found.items() if "{{" not in text}


def test_results_internals_and_seeds_are_in_their_own_schemas(fixture_run):
    with duckdb.connect(str(_published(fixture_run)), read_only=True) as con:
        rows = con.sql(
            "select schema_name, table_name from duckdb_tables() union all "
            "select schema_name, view_name from duckdb_views() where not internal"
        ).fetchall()
    by_schema: dict[str, set[str]] = {}
    for schema, name in rows:
        by_schema.setdefault(schema, set()).add(name)
    assert by_schema["main"] == _models_in("marts") | _models_in("diagnostics")
    assert by_schema["main_internal"] == _models_in("staging") | _models_in("intermediate")
    assert by_schema["main_raw"] == {p.stem for p in (PROJECT_ROOT / "seeds").glob("*.csv")}
    assert set(by_schema) == {"main", "main_internal", "main_raw"}


def test_every_table_and_column_has_its_description_as_comment(fixture_run):
    with duckdb.connect(str(_published(fixture_run)), read_only=True) as con:
        relations = con.sql(
            "select table_name, comment from duckdb_tables() union all "
            "select view_name, comment from duckdb_views() where not internal"
        ).fetchall()
        columns = con.sql(
            "select table_name, column_name, comment from duckdb_columns() where not internal"
        ).fetchall()
    built = {"marts", "diagnostics", "staging", "intermediate"}
    expected = set().union(*(_models_in(folder) for folder in built)) | {
        p.stem for p in (PROJECT_ROOT / "seeds").glob("*.csv")
    }
    assert sorted(name for name, _ in relations) == sorted(expected) and len(columns) > 150
    assert [name for name, comment in relations if not (comment or "").strip()] == []
    assert [(t, c) for t, c, comment in columns if not (comment or "").strip()] == []
    described = _yaml_descriptions()
    comments = {(t, None): comment for t, comment in relations} | {(t, c): m for t, c, m in columns}
    checked = [key for key in comments if key in described]
    assert len(checked) > 150
    for key in checked:
        assert comments[key].strip() == described[key].strip(), key


def test_the_build_ends_with_the_summary(fixture_run):
    log = fixture_run["log"]
    summary = log[log.rindex("web_text_dedup: done") :].splitlines()
    values = {line[:24].strip(): line[24:].strip() for line in summary[1:10] if line.startswith("  ")}
    assert values["documents in"] == "24"
    assert values["duplicate clusters"] == "6"
    assert values["documents removed"] == "12"
    assert values["representatives kept"] == "12"
    assert values["candidate pairs"] == "18 of 276 possible (93.48% fewer to score)"
    assert values["output files"] == str(fixture_run["output_dir"])
    # the first build into a fresh output folder: every document is new to the release
    assert values["changes vs release"] == "added 24   (changelog.parquet)"
    assert values["database"] == str(_published(fixture_run))
    assert any(line.strip().startswith("next") and "make sql" in line for line in summary)
    # nothing but dbt's own closing lines (hook status, timing, "Done.") comes after it
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in summary[11:]]  # colours
    after = [re.sub(r"^\d\d:\d\d:\d\d", "", line).strip() for line in plain]  # timestamps
    assert [line for line in after if line] and all(
        re.match(r"\d+ of \d+ (START|OK) hook|Finished running|Completed successfully|Done\. PASS", line)
        for line in after
        if line
    ), after


def _explain(fixture_run, args: str, *, check: bool = True):
    return run_dbt(
        ["run-operation", "explain_pair", "--args", args], db_path=fixture_run["db_path"], check=check
    ).stdout


def _reference_shingles(doc_id: str) -> set[str]:
    with open(PROJECT_ROOT / "seeds" / "documents.csv", newline="", encoding="utf-8") as handle:
        body = next(r["body"] for r in csv.DictReader(handle) if r["doc_id"] == doc_id)
    return ref.token_shingles(ref.normalize_text(body).split())


def test_explain_pair_reads_the_published_database_and_names_it(fixture_run):
    out = _explain(fixture_run, "{left: doc-013, right: doc-001}")
    assert f"explain_pair doc-001 ~ doc-013 (database {_published(fixture_run)})" in out
    left, right = _reference_shingles("doc-001"), _reference_shingles("doc-013")
    shared, union = len(left & right), len(left | right)
    assert f"exact Jaccard: {shared / union} ({shared} shared of {union} shingles)" in out
    build = _explain(fixture_run, "{left: doc-001, right: doc-013, database: build}")
    assert f"(database {fixture_run['db_path']})" in build


def test_explain_pair_names_the_missing_argument_and_the_database(fixture_run):
    missing = _explain(fixture_run, "{left: doc-001}", check=False)
    assert "explain_pair: missing argument 'right' (usage: dbt run-operation explain_pair" in missing
    unknown = _explain(fixture_run, "{left: doc-001, right: doc-999}", check=False)
    assert f"explain_pair: no document with doc_id 'doc-999' in {_published(fixture_run)}" in unknown


def _sql(*args: str, columns: int = 100) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=str(columns))
    return subprocess.run(
        [sys.executable, "-m", "webdedup.outputs.sql_shell", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_sql_prints_every_column_of_candidate_summary(fixture_run):
    published = str(_published(fixture_run))
    with duckdb.connect(published, read_only=True) as con:
        names = [row[0] for row in con.sql("describe candidate_summary").fetchall()]
    with open(fixture_run["output_dir"] / "candidate_summary.csv", newline="") as handle:
        expected = next(csv.DictReader(handle))
    assert len(names) == len(expected) == 15
    # narrower than the table: one `column | value` line per column
    narrow = _sql("--db", published, "select * from candidate_summary", columns=100)
    assert narrow.returncode == 0, narrow.stderr
    lines = {
        line.split("|")[0].strip(): line.split("|")[1].strip() for line in narrow.stdout.splitlines()[1:]
    }
    assert lines == expected
    # wide enough: one table with every column
    wide = _sql("--db", published, "select * from candidate_summary", columns=1000)
    header = wide.stdout.splitlines()[1]
    assert [cell.strip() for cell in header.strip("│").split("│")] == names


def test_sql_prints_every_row_and_reads_piped_statements(fixture_run):
    published = str(_published(fixture_run))
    out = _sql("--db", published, "select doc_id from clusters order by doc_id", columns=200).stdout
    assert [f"doc-{i:03d}" for i in range(1, 25)] == [
        line.strip("│ ") for line in out.splitlines() if line.startswith("│ doc-")
    ]
    piped = subprocess.run(
        [sys.executable, "-m", "webdedup.outputs.sql_shell", "--db", published],
        input="select count(*) as n\nfrom main_internal.stg_documents;\nselect nope;\n.tables\n",
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert piped.returncode == 0
    assert "│    24 │" in piped.stdout
    assert "error: Binder Error" in piped.stdout  # an error does not end the session
    assert "main_internal │ int_fingerprints" in piped.stdout


def test_sql_names_a_missing_database(tmp_path):
    result = _sql("--db", str(tmp_path / "none.duckdb"), "select 1")
    assert result.returncode != 0
    assert f"sql: no database at {tmp_path / 'none.duckdb'}: run `make run`" in result.stderr


@pytest.fixture(scope="module")
def renamed_fixture_run(tmp_path_factory):
    """The fixture's documents under other ids (so no labeled pair is in the input), with
    fingerprint_detail: full."""
    work = tmp_path_factory.mktemp("renamed_fixture")
    with open(PROJECT_ROOT / "seeds" / "documents.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    documents = work / "docs.csv"
    with open(documents, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "doc_id": "page-" + row["doc_id"]} for row in rows)
    output_dir = work / "output"
    run_dbt(
        ["build"],
        db_path=work / "db.duckdb",
        dbt_vars={
            "documents_path": str(documents),
            "output_dir": str(output_dir),
            "fingerprint_detail": "full",
        },
    )
    return {"work": work, "rows": rows, "output_dir": output_dir}


def test_labeled_pair_metrics_say_there_are_no_labels(renamed_fixture_run):
    with duckdb.connect(str(renamed_fixture_run["work"] / "published" / "db.duckdb"), read_only=True) as con:
        row = con.sql("select * from labeled_pair_metrics").fetchall()[0]
        names = [d[0] for d in con.sql("select * from labeled_pair_metrics").description]
    metrics = dict(zip(names, row, strict=True))
    assert metrics["labels_status"] == "no labels for this input"
    assert metrics["evaluated_pairs"] == 0
    rates = ("true_positives", "false_positives", "false_negatives", "true_negatives", "pair_precision")
    assert {name: metrics[name] for name in (*rates, "pair_recall", "f1")} == dict.fromkeys(
        (*rates, "pair_recall", "f1")
    )


def test_labeled_pair_metrics_on_the_fixture(fixture_run):
    with duckdb.connect(str(_published(fixture_run)), read_only=True) as con:
        status = con.sql("select labels_status, true_positives from labeled_pair_metrics").fetchall()[0]
    with open(PROJECT_ROOT / "seeds" / "labeled_pairs.csv", newline="") as handle:
        labeled = list(csv.DictReader(handle))
    duplicates = sum(r["is_duplicate"] == "true" for r in labeled)
    assert status == (f"evaluated {len(labeled)} of {len(labeled)} labeled pairs", duplicates)


def test_fingerprint_detail_full_holds_the_specs_normalized_text_and_shingles(renamed_fixture_run):
    path = renamed_fixture_run["output_dir"] / "fingerprinted.parquet"
    got = {
        doc_id: (text, shingles)
        for doc_id, text, shingles in duckdb.sql(
            f"select doc_id, normalized_text, shingles from '{path}'"
        ).fetchall()
    }
    assert len(got) == len(renamed_fixture_run["rows"]) == 24
    for row in renamed_fixture_run["rows"]:
        text, shingles = got["page-" + row["doc_id"]]
        expected_text = ref.normalize_text(row["body"])
        assert text == expected_text
        assert shingles == sorted(ref.token_shingles(expected_text.split()))


def test_fingerprint_detail_is_off_by_default(fixture_run):
    path = fixture_run["output_dir"] / "fingerprinted.parquet"
    names = [d[0] for d in duckdb.sql(f"select * from '{path}'").description]
    assert names == ["doc_id", "token_count", "shingle_count", "shingle_set_key", "signature", "band_keys"]
