"""Checks that turn a user's mistake into one line naming the problem and what to do (issue 14).

* :func:`output_dir_problem`: var output_dir is an existing file, or a folder (or its nearest existing
  parent) this process cannot write: the message, else "" (the ``webdedup_output_dir_problem`` SQL
  function, called by the on-run-start hook ``check_run_environment``).
* :func:`database_lock_problem`: the build database is locked by another process: the message with the
  PID and program DuckDB reports, else "".  Called by the dbt plugin before it attaches the file.
* :func:`published_file_problem`: the published database is open for writing in another process (an
  analyst's read-write connection): replacing it would silently drop what that process writes, so
  publishing refuses, naming the process.  Read-only connections are no obstacle (they keep the old file).
"""

from __future__ import annotations

import os
import re

LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.*?) \(PID (?P<pid>\d+)\)")


def output_dir_problem(path: str) -> str:
    absolute = os.path.abspath(path)
    if os.path.exists(absolute) and not os.path.isdir(absolute):
        return (
            f"output_dir '{path}' is an existing file, not a folder: remove it or pass another folder,"
            " e.g. --vars '{output_dir: out/mine}'"
        )
    existing = absolute
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        return (
            f"output_dir '{path}' cannot be created: '{existing}' is a file, not a folder;"
            " pass another folder"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "folder" if existing == absolute else f"folder '{existing}' (where it would be created)"
        return (
            f"output_dir '{path}' is not writable: this user cannot write to the {what};"
            " pass a writable folder"
        )
    return ""


def lock_holder(message: str) -> str:
    """'PID 123 (/usr/bin/python3)' from DuckDB's lock error, or '' when it names none."""
    match = LOCK_HOLDER.search(message)
    return f"PID {match['pid']} ({match['program']})" if match else ""


def _lock_error(path: str, read_only: bool) -> str:
    """DuckDB's lock error when opening path now, else ''."""
    import duckdb

    try:
        duckdb.connect(path, read_only=read_only).close()
    except duckdb.Error as exc:
        # anything else (a file that is not a database, ...) is left to the real open to report
        return str(exc) if "Could not set lock" in str(exc) else ""
    return ""


def database_lock_problem(path: str) -> str:
    if not path or path == ":memory:" or "://" in path or not os.path.isfile(path):
        return ""
    error = _lock_error(path, read_only=False)
    if not error:
        return ""
    holder = lock_holder(error) or "another process"
    return (
        f"the build database '{path}' is in use by {holder}: wait for that build to finish or close that"
        " connection, or build into another file with DEDUP_DB_PATH=<other file>"
    )


def published_file_problem(build_path: str, publish_dir: str) -> str:
    """For the copy of build_path that publishing would put into publish_dir."""
    path = os.path.join(os.path.abspath(publish_dir), os.path.basename(build_path))
    if path == os.path.abspath(build_path) or not os.path.isfile(path):
        return ""
    # a read-only open succeeds beside other readers and fails only beside a writer
    error = _lock_error(path, read_only=True)
    if not error:
        return ""
    holder = lock_holder(error) or "another process"
    return (
        f"not published: '{path}' is open for writing by {holder}; replacing it would lose what that"
        " connection writes. Close it (keep your own tables in your own database: see"
        " docs/operations-analysts.md) and run dbt build again"
    )
