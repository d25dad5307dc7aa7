"""Checks that turn a user's mistake into one line naming the problem and what to do (issue 14).

* :func:`output_dir_problem`: var output_dir is an existing file, or a folder (or its nearest existing
  parent) this process cannot write: the message, else "".
* :func:`claim_output_dir` (the ``webdedup_claim_output_dir`` SQL function, called by the on-run-start
  hook ``check_run_environment``): output_dir_problem, then this build holds the output folder (an
  advisory lock on the folder itself, released when the process ends, also when it is killed) so that
  a second build writing to the same folder at the same time is refused, naming the first one's PID,
  instead of deleting its staged files.
* :func:`database_lock_problem`: the build database is locked by another process: the message with the
  PID and program DuckDB reports, else "".  Called by the dbt plugin before it attaches the file.
* :func:`published_file_problem`: the published database is open for writing in another process (an
  analyst's read-write connection): replacing it would silently drop what that process writes, so
  publishing refuses, naming the process.  Read-only connections are no obstacle (they keep the old file).
"""

from __future__ import annotations

import fcntl
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


_claimed: dict[str, int] = {}


def claim_output_dir(path: str) -> str:
    """Create output_dir if needed and lock it for this process: '' on success, else the refusal."""
    if problem := output_dir_problem(path):
        return problem
    absolute = os.path.abspath(path)
    if absolute in _claimed:
        return ""
    os.makedirs(absolute, exist_ok=True)
    descriptor = os.open(absolute, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        holder = _flock_holder(absolute)
        return (
            f"output_dir '{path}' is being written by another dbt build ({holder}): wait for it to finish,"
            " or pass another folder, e.g. --vars '{output_dir: out/mine}'"
        )
    _claimed[absolute] = descriptor  # held until this process ends
    return ""


def _flock_holder(path: str) -> str:
    """'PID n' of the process holding a flock on path, from /proc/locks (Linux), else 'another process'."""
    stat = os.stat(path)
    wanted = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    try:
        with open("/proc/locks") as handle:
            for line in handle:
                fields = line.split()
                # 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF
                if (
                    len(fields) >= 6
                    and fields[1] == "FLOCK"
                    and fields[5] == wanted
                    and fields[4] != str(os.getpid())
                ):
                    return f"PID {fields[4]}"
    except OSError:
        pass
    return "another process"


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


def database_lock_problem(path: str, read_only: bool = False) -> str:
    """Why the build cannot open path now (another process holds it), '' when it can.  read_only: the
    command attaches it read-only, which other readers (analysts on the published file) do not block."""
    if not path or path == ":memory:" or "://" in path or not os.path.isfile(path):
        return ""
    error = _lock_error(path, read_only=read_only)
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
        " docs/analysts.md) and run dbt build again"
    )
