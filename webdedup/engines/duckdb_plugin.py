"""dbt-duckdb plugin: registers the project's SQL functions on every dbt connection.

Registered in profiles.yml (``plugins: [{module: webdedup.engines.duckdb_plugin}]``).  The functions and
their types come from the one registry, webdedup/engines/udfs.py.
"""

from __future__ import annotations

import dataclasses
import functools
import os

from dbt.adapters.duckdb.credentials import Attachment
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt.adapters.events.logging import AdapterLogger
from dbt.flags import get_flags
from dbt_common.exceptions import DbtRuntimeError

from webdedup.engines.duckdb_memory import ENV_VAR, allocator_settings, memory_limit, remember_configured
from webdedup.engines.udfs import DUCKDB, for_engine
from webdedup.outputs.files import own_build_file
from webdedup.outputs.guards import database_lock_problem

LOGGER = AdapterLogger("web_text_dedup")

# dbt commands (flags.WHICH) that never write to the build file: they attach it read-only, so they
# neither copy a file shared with the published database (about 18 GB at 10M pages for a `dbt docs
# generate`) nor wait for readers of it
READ_ONLY_COMMANDS = frozenset({"compile", "debug", "generate", "list", "parse", "show"})


def _quote_attach_aliases() -> None:
    """profiles.yml attaches the build file (DEDUP_DB_PATH) under its stem, the name DuckDB gives a file
    it opens, so that the views in the published database resolve.  dbt-duckdb 1.11 writes
    ``ATTACH '<path>' AS <alias>`` with the alias unquoted, which makes a file named like
    ``my-crawl.duckdb`` or ``default.duckdb`` a syntax error; this quotes it (the rest of the statement
    stays dbt-duckdb's).  Runs when dbt-duckdb loads this plugin, before it opens the database."""
    if getattr(Attachment.to_sql, "quotes_alias", False):
        return
    unquoted_to_sql = Attachment.to_sql

    def to_sql(self) -> str:
        if not self.alias or self.alias.startswith('"'):
            return unquoted_to_sql(self)
        return unquoted_to_sql(dataclasses.replace(self, alias='"' + self.alias.replace('"', '""') + '"'))

    to_sql.quotes_alias = True
    Attachment.to_sql = to_sql


_quote_attach_aliases()


def register_functions(conn) -> None:
    """Create every DuckDB function of the registry on ``conn`` (a no-op for those already there)."""
    for udf in for_engine(DUCKDB):
        parameters, result = udf.sql_types(DUCKDB)
        options = {"side_effects": udf.side_effects}
        function = udf.arrow_function or udf.function
        if udf.vectorized or udf.arrow_function:
            options["type"] = "arrow"
        if udf.takes_nulls:
            options["null_handling"] = "special"
        function = functools.partial(function, conn) if udf.takes_connection else function
        try:
            conn.create_function(udf.name, function, parameters, result, **options)
        except Exception as exc:  # already registered on this connection
            if "already exists" not in str(exc):
                raise


class Plugin(BasePlugin):
    def update_connection_config(self, creds, config: dict) -> None:
        """DuckDB's memory limit: DEDUP_MEMORY_LIMIT, else a share of this machine's, and the allocator
        settings derived from it (duckdb_memory.py); a profile's config_options entries win."""
        explicit = "memory_limit" in config or bool(os.environ.get(ENV_VAR, "").strip())
        config.setdefault("memory_limit", memory_limit())
        remember_configured(config["memory_limit"], derived=not explicit)
        for name, value in allocator_settings(config["memory_limit"]).items():
            config.setdefault(name, value)

    def configure_connection(self, conn) -> None:
        # runs just before dbt-duckdb attaches the build file: a command that only reads attaches an
        # existing file read-only; any other first gives the build a file of its own when the last publish
        # shared it with the published database (webdedup/outputs/files.py); then a lock held by another
        # process is one line (a DbtRuntimeError), not dbt-duckdb's chained tracebacks
        reads_only = getattr(get_flags(), "WHICH", None) in READ_ONLY_COMMANDS
        for attachment in (self.creds.attach or []) if self.creds else []:
            local = "://" not in attachment.path and attachment.path != ":memory:"
            if local and reads_only and os.path.isfile(attachment.path):
                attachment.read_only = True
            elif local and (done := own_build_file(attachment.path)):
                LOGGER.info(done)
            if problem := database_lock_problem(attachment.path, read_only=bool(attachment.read_only)):
                raise DbtRuntimeError(problem)
            if local:
                # DEDUP_DB_PATH in a folder that does not exist yet: create it, as a database file's
                # folder is created for the default target/
                os.makedirs(os.path.dirname(os.path.abspath(attachment.path)), exist_ok=True)
        register_functions(conn)
