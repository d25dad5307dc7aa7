"""The input files of the build, one row each: its place in sorted path order, name, size and sha256.

A thin adapter over webdedup/outputs/manifest.py (through the engine's ``input_files``).  It needs only
the settings, so dbt runs it at the start, beside staging: the input is hashed while it is read, not
after every other stage; run_manifest reports these rows.  A file the previous table holds with the same
path, size and modification time (file_key) is not hashed again.
"""

from webdedup.engines import models_for


def model(dbt, session):
    dbt.config(materialized="table")
    settings = dbt.ref("int_run_settings")
    return models_for(session).input_files(session, settings=settings, existing=str(dbt.this))
