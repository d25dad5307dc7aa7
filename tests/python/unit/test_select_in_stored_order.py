"""macros/dialect/dialect.sql's duckdb__select_in_stored_order (the release view deduped_documents) on tables
of several DuckDB vectors, against the rows listed in Python: a reader's LIMIT or OFFSET gets the first
kept rows in the table's order (a LIMIT stops the table's scan, and the positional join pads the lookup's
other rows with nulls: an analyst's `select * from deduped_documents limit 5` on a 1M-page database failed
with the "must hold one row per doc_id" error before), and a lookup that does not line up still stops the
query."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import jinja2
import pytest

MACROS = Path(__file__).resolve().parents[3] / "macros" / "dialect" / "dialect.sql"
DOCUMENTS = 10_000  # about five 2,048-row vectors


def _release_sql() -> str:
    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    environment.globals["sql_string"] = lambda value: "'" + str(value).replace("'", "''") + "'"
    module = environment.from_string(MACROS.read_text()).module
    return str(
        module.duckdb__select_in_stored_order(
            "stored.doc_id, stored.body, matched.cluster_id", "documents", "lookup", "doc_id", "keep"
        )
    )


@pytest.fixture(scope="module")
def database():
    ids = [f"doc-{number:06d}" for number in range(DOCUMENTS)]
    random.Random(7).shuffle(ids)  # stored order is not the keys' order
    con = duckdb.connect()
    con.execute("create table documents (doc_id varchar, body varchar)")
    con.executemany("insert into documents values (?, ?)", [(doc_id, f"body of {doc_id}") for doc_id in ids])
    # the lookup in another order than the table's, every third document kept
    con.execute(
        "create table lookup as select doc_id, 'cluster-' || doc_id as cluster_id,"
        " cast(substr(doc_id, 5) as integer) % 3 = 0 as keep from documents order by doc_id desc"
    )
    kept = [(doc_id, f"body of {doc_id}", f"cluster-{doc_id}") for doc_id in ids if int(doc_id[4:]) % 3 == 0]
    yield con, kept
    con.close()


@pytest.mark.parametrize("limit", [1, 5, 682, 683, 684, 2048, 3000, DOCUMENTS])
def test_a_limit_gets_the_first_kept_rows_in_stored_order(database, limit):
    con, kept = database
    assert con.sql(f"select * from ({_release_sql()}) limit {limit}").fetchall() == kept[:limit]


def test_an_offset_and_the_whole_release_keep_the_stored_order(database):
    con, kept = database
    release = _release_sql()
    assert con.sql(f"select * from ({release}) limit 3 offset 2000").fetchall() == kept[2000:2003]
    assert con.sql(release).fetchall() == kept
    assert con.sql(f"select count(*) from ({release})").fetchall() == [(len(kept),)]


@pytest.mark.parametrize(
    ("tampering", "message"),
    [
        # the 5,000th document's lookup row is gone
        (
            "delete from lookup where doc_id = (select doc_id from documents where rowid = 5000)",
            "at doc_id {at_5000} it gives none",
        ),
        # the 5,000th document's lookup row twice: the next document gets it
        (
            "insert into lookup select * from lookup"
            " where doc_id = (select doc_id from documents where rowid = 5000)",
            "at doc_id {at_5001} it gives {at_5000}",
        ),
    ],
)
def test_a_lookup_that_does_not_line_up_stops_the_query(database, tampering, message):
    con, _ = database
    tampered = con.cursor()
    tampered.execute("begin")
    try:
        at_5000, at_5001 = (
            tampered.execute(f"select doc_id from documents where rowid = {row}").fetchone()[0]
            for row in (5000, 5001)
        )
        tampered.execute(tampering)
        refusal = "lookup must hold one row per doc_id of documents"
        with pytest.raises(duckdb.InvalidInputException, match=refusal) as error:
            tampered.sql(_release_sql()).fetchall()
        assert message.format(at_5000=at_5000, at_5001=at_5001) in str(error.value)
    finally:
        tampered.execute("rollback")
