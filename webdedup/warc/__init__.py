"""WARC input: records from local WARC files or pinned byte ranges, the main text of their HTML.

Behind the ``stg_warc_records`` dbt Python model.  One module per step: ``framing`` (gzip members and
records), ``sources`` (files, folders, globs, byte-range reads over file/http/s3), ``ranges`` (the ranges
table), ``records`` (a record to a row and its status, FastWARC), ``extract`` (charset, main text and
title, Resiliparse), ``reuse`` (read keys, so a later build reads only what is new) and ``reader`` (the
whole input as record batches).  ``schema`` holds the row's columns and statuses.
"""
