"""A SQL shell on the published database: ``make sql`` (interactive) and ``make sql Q="select ..."``.

``python -m webdedup.outputs.sql_shell [--db PATH] [QUERY]`` opens the database read-only (by default the
published database a successful ``dbt build`` writes: ``$DEDUP_PUBLISH_DIR/<file name of $DEDUP_DB_PATH>``, as
macros/outputs/publish_database.sql does), runs QUERY and prints the whole result, every row and every column,
or, without QUERY, reads statements (ending with ``;``) from the terminal until end of input.

A result prints as a table; when the table would be wider than the terminal it prints one
``column | value`` line per column, row by row (as psql's ``\\x auto``), so no column is ever cut.
``.tables`` lists the tables and views with their descriptions; results are in schema ``main`` (the
default), the internals in ``main_internal`` and the seeds in ``main_raw``.  ``--db :memory:`` gives an
empty in-memory database, for querying output files (``select * from 'output/clusters.csv'``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys

import duckdb

# The build file's default path is profiles.yml's (DEDUP_DB_PATH); the published database keeps its name.
DEFAULT_BUILD_PATH = "target/web_text_dedup.duckdb"
TABLES = """
with relations as (
    select schema_name, table_name as name, 'table' as kind, comment
    from duckdb_tables() where database_name = current_database()
    union all
    select schema_name, view_name, 'view', comment
    from duckdb_views() where database_name = current_database() and not internal
)
select
    schema_name as schema, name, kind,
    case when length(comment) > 70 then left(comment, 67) || '...' else comment end as description
from relations
order by schema_name = 'main' desc, schema_name, name
"""
UNLIMITED = 2**31 - 1


def published_database(environ: dict | None = None) -> str:
    """The published database file: ``$DEDUP_PUBLISH_DIR/<file name of $DEDUP_DB_PATH>``."""
    environ = os.environ if environ is None else environ
    build_path = environ.get("DEDUP_DB_PATH", DEFAULT_BUILD_PATH)
    return os.path.join(environ.get("DEDUP_PUBLISH_DIR", "."), os.path.basename(build_path))


def connect(path: str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to ``path`` (``:memory:`` for an empty database); a missing file is a
    one-line error naming it."""
    if path == ":memory:":
        return duckdb.connect()
    if not os.path.exists(path):
        raise SystemExit(
            f"sql: no database at {os.path.abspath(path)}: run `make run` (or `dbt build`) first"
        )
    return duckdb.connect(path, read_only=True)


def _table(relation: duckdb.DuckDBPyRelation) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        relation.show(max_width=UNLIMITED, max_rows=UNLIMITED, max_col_width=UNLIMITED, null_value="NULL")
    return buffer.getvalue()


def _vertical(relation: duckdb.DuckDBPyRelation) -> str:
    names = relation.columns
    width = max(len(name) for name in names)
    lines = []
    for number, row in enumerate(relation.fetchall(), start=1):
        lines.append(f"-[ row {number} ]" + "-" * max(0, width - 8))
        lines += [
            f"{name.ljust(width)} | {'NULL' if v is None else v}" for name, v in zip(names, row, strict=True)
        ]
    if not lines:
        lines.append("(no rows; columns: " + ", ".join(names) + ")")
    return "\n".join(lines) + "\n"


def render(relation: duckdb.DuckDBPyRelation, width: int) -> str:
    """The whole result as text: a table, or ``column | value`` lines when the table is wider than
    ``width`` characters."""
    table = _table(relation)
    if max(len(line) for line in table.splitlines()) <= width:
        return table
    return _vertical(relation)


def run(connection: duckdb.DuckDBPyConnection, statement: str, width: int) -> str:
    """Run one statement (or the ``.tables`` command); returns what to print."""
    text = statement.strip().rstrip(";").strip()
    if not text:
        return ""
    if text == ".tables":
        text = TABLES
    relation = connection.sql(text)
    return "" if relation is None else render(relation, width)


def shell(connection: duckdb.DuckDBPyConnection, path: str, width: int, interactive: bool) -> int:
    """Read statements ending with ';' from stdin until end of input; errors are printed, not fatal.
    Prompts only when ``interactive`` (a terminal); piped input runs statement by statement alike."""
    if interactive:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (line editing and history for input())
        print(f"{path} (read-only). Statements end with ';'. .tables lists the tables; Ctrl-D quits.")
    pending: list[str] = []
    while True:
        try:
            line = input(("sql> " if not pending else "...> ") if interactive else "")
        except EOFError:
            if interactive:
                print()
            return 0
        except KeyboardInterrupt:
            print()
            pending = []
            continue
        pending.append(line)
        statement = "\n".join(pending).strip()
        if not (statement.endswith(";") or statement == ".tables"):
            continue
        pending = []
        try:
            print(run(connection, statement, width), end="")
        except duckdb.Error as exc:
            print(f"error: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m webdedup.outputs.sql_shell", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("query", nargs="?", help="one statement to run; without it, an interactive shell")
    parser.add_argument("--db", default=None, help="database file (default: the published database)")
    args = parser.parse_args(argv)
    path = args.db or published_database()
    connection = connect(path)
    width = shutil.get_terminal_size((160, 24)).columns
    if args.query is None or not args.query.strip():
        return shell(connection, os.path.abspath(path), width, interactive=sys.stdin.isatty())
    try:
        print(run(connection, args.query, width), end="")
    except duckdb.Error as exc:
        print(f"sql: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
