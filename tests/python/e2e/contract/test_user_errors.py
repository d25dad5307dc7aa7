"""Failures a user can cause end in one message naming the problem and what to do, without a traceback
(issue 14); an empty input warns; publishing never destroys an analyst's work."""

import fcntl
import json
import os
import shutil
import subprocess
import sys

import duckdb
import pytest

from tests.python.helpers.dbt_runner import DBT, PROJECT_ROOT, run_dbt

pytestmark = pytest.mark.dbt

# the program DuckDB names as the lock holder: the interpreter, symlinks resolved
PROGRAM = os.path.realpath(sys.executable)
HEADER = "doc_id,source,domain,crawled_at,title,body\n"

HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
if len(sys.argv) > 2:
    con.sql(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
"""


def _fails_cleanly(result, message):
    assert result.returncode != 0
    assert message in result.stdout, result.stdout[-3000:]
    assert "Traceback" not in result.stdout
    # the message is in the last lines of the log, after everything else dbt printed
    assert message in "\n".join(result.stdout.rstrip().splitlines()[-8:])


class Holder:
    """Another process holding a DuckDB file open read-write (optionally after running sql)."""

    def __init__(self, path, sql=None):
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(path), *([sql] if sql else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline().strip() == "ready"
        self.pid = self.process.pid

    def close(self):
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        self.process.wait(timeout=60)


def test_output_dir_that_is_a_file_is_refused_before_any_work(tmp_path):
    target = tmp_path / "results"
    target.write_text("not a folder")
    result = run_dbt(
        ["build"], db_path=tmp_path / "db.duckdb", dbt_vars={"output_dir": str(target)}, check=False
    )
    _fails_cleanly(
        result,
        f"output_dir '{target}' is an existing file, not a folder: remove it or pass another folder,"
        " e.g. --vars '{output_dir: out/mine}'",
    )
    assert "START sql" not in result.stdout  # no model ran
    assert "discarded" not in result.stdout
    assert target.read_text() == "not a folder"


def test_output_dir_below_a_file_is_refused(tmp_path):
    (tmp_path / "afile").write_text("x")
    target = tmp_path / "afile" / "out"
    result = run_dbt(
        ["build"], db_path=tmp_path / "db.duckdb", dbt_vars={"output_dir": str(target)}, check=False
    )
    _fails_cleanly(
        result,
        f"output_dir '{target}' cannot be created: '{tmp_path / 'afile'}' is a file, not a folder;"
        " pass another folder",
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to any folder")
def test_output_dir_that_is_not_writable_is_refused(tmp_path):
    target = tmp_path / "locked"
    target.mkdir()
    target.chmod(0o500)
    try:
        result = run_dbt(
            ["build"], db_path=tmp_path / "db.duckdb", dbt_vars={"output_dir": str(target)}, check=False
        )
    finally:
        target.chmod(0o700)
    _fails_cleanly(result, f"output_dir '{target}' is not writable: this user cannot write to the folder")


def test_a_build_database_locked_by_another_process_names_its_pid(tmp_path):
    db_path = tmp_path / "db.duckdb"
    duckdb.connect(str(db_path)).close()
    holder = Holder(db_path)
    try:
        result = run_dbt(
            ["build"], db_path=db_path, dbt_vars={"output_dir": str(tmp_path / "out")}, check=False
        )
    finally:
        holder.close()
    _fails_cleanly(
        result,
        f"the build database '{db_path}' is in use by PID {holder.pid} ({PROGRAM}): wait for that"
        " build to finish or close that connection, or build into another file with"
        " DEDUP_DB_PATH=<other file>",
    )
    assert len(result.stdout.splitlines()) < 20  # not ~220 lines of tracebacks


@pytest.mark.parametrize(
    "file_name", ["it's.duckdb", 'say "hi" & 50%.duckdb', "memory.duckdb", "main.duckdb"]
)
def test_a_database_file_name_of_any_characters_builds_and_its_published_views_resolve(tmp_path, file_name):
    run_dbt(["build"], db_path=tmp_path / file_name, dbt_vars={"output_dir": str(tmp_path / "out")})
    published = duckdb.connect(str(tmp_path / "published" / file_name), read_only=True)
    assert published.execute("select count(*) from deduped_documents").fetchone()[0] == 12
    assert published.execute("select count(*) from main_internal.stg_documents").fetchone()[0] == 24
    published.close()


def test_an_empty_input_warns_and_candidate_summary_says_zero(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text(HEADER)
    result = run_dbt(
        ["build"],
        db_path=tmp_path / "db.duckdb",
        dbt_vars={"documents_path": str(path), "output_dir": str(tmp_path / "out")},
    )
    assert (
        f"the input has no documents (documents_path '{path}'): every output is empty and candidate_summary"
        " says 0; check documents_path or the WARC vars" in result.stdout
    )
    assert "Warning in test assert_input_has_documents" in result.stdout
    assert "WARN=1" in result.stdout.splitlines()[-1]
    summary = duckdb.sql(
        f"select documents, candidate_pairs from '{tmp_path / 'out' / 'candidate_summary.csv'}'"
    )
    assert summary.fetchall() == [(0, 0)]
    assert duckdb.sql(f"select count(*) from '{tmp_path / 'out' / 'clusters.csv'}'").fetchall() == [(0,)]


def test_publishing_refuses_to_replace_a_file_an_analyst_holds_for_writing(tmp_path):
    db_path = tmp_path / "web_text_dedup.duckdb"
    published = tmp_path / "published" / "web_text_dedup.duckdb"
    out = tmp_path / "out"
    run_dbt(["build"], db_path=db_path, dbt_vars={"output_dir": str(out)})
    analyst = Holder(published, "create table my_notes as select 'doc-001' as doc_id, 'keep me' as note")
    try:
        corpus = tmp_path / "docs.csv"
        corpus.write_text(HEADER + "a,s,d,2024-01-01,t,one two three\nb,s,e,2024-01-02,t,four five six\n")
        result = run_dbt(
            ["build"],
            db_path=db_path,
            dbt_vars={"documents_path": str(corpus), "output_dir": str(out)},
            check=False,
        )
    finally:
        analyst.close()
    _fails_cleanly(
        result,
        f"publish_database: not published: '{published}' is open for writing by PID {analyst.pid}"
        f" ({PROGRAM}); replacing it would lose what that connection writes.",
    )
    con = duckdb.connect(str(published), read_only=True)
    assert con.execute("from my_notes").fetchall() == [("doc-001", "keep me")]  # the analyst's work survives
    assert (
        con.execute("select count(*) from main_internal.stg_documents").fetchone()[0] == 24
    )  # the old result, untouched
    con.close()


ANALYST = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("create table my_notes as select 'doc-001' as doc_id, 'keep me' as note")
con.execute(f"attach '{sys.argv[2]}' as dedup (read_only)")
print(con.execute("select count(*) from dedup.main_internal.stg_documents").fetchone()[0], flush=True)
sys.stdin.readline()
print(con.execute("select count(*) from dedup.main_internal.stg_documents").fetchone()[0], flush=True)
con.execute("detach dedup")
con.execute(f"attach '{sys.argv[2]}' as dedup (read_only)")
print(con.execute("select count(*) from dedup.main_internal.stg_documents").fetchone()[0], flush=True)
print(con.execute("select note from my_notes").fetchone()[0], flush=True)
"""


def test_an_analyst_database_attaching_the_results_read_only_keeps_its_tables(tmp_path):
    """The documented scheme (docs/analysts.md): the analyst's own database attaches the
    published file read-only; builds go on, the analyst's tables survive, a new attach sees the new result."""
    db_path = tmp_path / "web_text_dedup.duckdb"
    published = tmp_path / "published" / "web_text_dedup.duckdb"
    run_dbt(["build"], db_path=db_path, dbt_vars={"output_dir": str(tmp_path / "out")})
    analyst = subprocess.Popen(
        [sys.executable, "-c", ANALYST, str(tmp_path / "analysis.duckdb"), str(published)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert analyst.stdout.readline().strip() == "24"
    corpus = tmp_path / "docs.csv"
    corpus.write_text(HEADER + "a,s,d,2024-01-01,t,one two three\nb,s,e,2024-01-02,t,four five six\n")
    run_dbt(
        ["build"],
        db_path=db_path,
        dbt_vars={"documents_path": str(corpus), "output_dir": str(tmp_path / "out")},
    )
    analyst.stdin.write("\n")
    analyst.stdin.flush()
    assert analyst.stdout.readline().strip() == "24"  # the open attachment keeps the previous result
    assert analyst.stdout.readline().strip() == "2"  # attached again: the new result
    assert analyst.stdout.readline().strip() == "keep me"
    analyst.wait(timeout=60)
    con = duckdb.connect(str(tmp_path / "analysis.duckdb"), read_only=True)
    assert con.sql("from my_notes").fetchall() == [("doc-001", "keep me")]
    con.close()


def test_the_documented_analyst_example_runs_as_written(fixture_run, tmp_path):
    """The copy-paste example of docs/analysts.md, run beside a published database."""
    text = (PROJECT_ROOT / "docs" / "analysts.md").read_text()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    shutil.copy(fixture_run["work"] / "published" / "dedup.duckdb", tmp_path / "web_text_dedup.duckdb")
    result = subprocess.run(
        [sys.executable, "-c", example],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert result.returncode == 0, result.stdout
    assert "cluster_size" in result.stdout
    con = duckdb.connect(str(tmp_path / "analysis.duckdb"), read_only=True)
    assert con.execute("select count(*) from my_notes").fetchall() == [(0,)]
    con.close()


CLAIM = """
import sys
from webdedup.outputs.guards import claim_output_dir
print(claim_output_dir(sys.argv[1]) or "claimed", flush=True)
sys.stdin.readline()
"""


def _folder_is_locked(path):
    descriptor = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False


def test_a_build_holds_its_output_dir_while_it_runs(tmp_path):
    out = tmp_path / "out"
    env = dict(
        os.environ,
        DEDUP_DB_PATH=str(tmp_path / "first.duckdb"),
        DEDUP_PUBLISH_DIR=str(tmp_path / "published"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    command = [DBT, "build", "--profiles-dir", str(PROJECT_ROOT), "--project-dir", str(PROJECT_ROOT)]
    build = subprocess.Popen(
        [*command, "--vars", json.dumps({"output_dir": str(out)})],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log, locked = [], None
    for line in build.stdout:
        log.append(line)
        if locked is None and "START sql" in line:  # past on-run-start, models running
            locked = _folder_is_locked(out)
    assert build.wait() == 0, "".join(log)[-3000:]
    assert locked is True
    assert not _folder_is_locked(out)  # released when the build ends


def test_a_second_build_writing_to_the_same_output_dir_is_refused_naming_the_first(tmp_path):
    """Two builds into different databases but one output folder: the second is refused before any work
    (it would have deleted the first one's staged files).  The first is stood in for by a process holding
    the folder as a build does (run_guards.claim_output_dir), so the timing cannot race."""
    out = tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, "-c", CLAIM, str(out)],
        cwd=PROJECT_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout.readline().strip() == "claimed"
        second = run_dbt(
            ["build"], db_path=tmp_path / "second.duckdb", dbt_vars={"output_dir": str(out)}, check=False
        )
    finally:
        first.stdin.write("\n")
        first.stdin.flush()
        first.wait(timeout=60)
    _fails_cleanly(
        second,
        f"output_dir '{out}' is being written by another dbt build (PID {first.pid}): wait for it to finish,"
        " or pass another folder",
    )
    assert "START sql" not in second.stdout
    assert list(out.iterdir()) == []
