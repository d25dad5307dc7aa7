"""The input files of the build, one row each: its place in sorted path order, name, size and sha256.

A thin adapter over webdedup/outputs/manifest.py (through the engine's ``input_files``).  It needs only
the settings, so dbt runs it at the start, beside staging: the input is hashed while it is read, not
after every other stage; run_manifest reports these rows.
"""

from webdedup.engines import models_for


def model(dbt, session):
    dbt.config(materialized="table")
    return models_for(session).input_files(session, settings=dbt.ref("int_run_settings"))
