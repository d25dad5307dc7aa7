"""Documents at the edges of what the kernels assume, through a whole `dbt build` in small batches: many
one-letter pages (more tokens than half a batch's bytes), pages with no token at all, pages of one
2 MB token, pages of one word repeated 100,000 times, and near-duplicates in scripts whose normalization
rewrites bytes (combining marks, Hangul, final sigma, emoji sequences, Arabic).  Every scored Jaccard and
every cluster must equal the brute force over the spec's reference functions."""

from __future__ import annotations

import datetime as dt
import itertools
import random

import duckdb
import pyarrow as pa
import pytest

from tests.python.helpers import quality_corpora as qc
from tests.python.helpers.dbt_runner import build_table
from webdedup.core import reference as ref

pytestmark = pytest.mark.dbt

SCRIPTS = {
    "zalgo": "z\u0336a\u0337l\u0338g\u0335o\u0334 t\u0301e\u0300x\u0302t\u0303",
    "hangul": "한국어 문장 입니다",
    "greek": "ΟΔΟΣ ΣΟΦΟΣ σοφός ΌΣΑΣ",
    "emoji": "👩‍👩‍👧 🏳️‍🌈 ✋🏽",
    "arabic": "مرحبا بالعالم ٣",
}


def _bodies() -> dict[str, str | None]:
    rng = random.Random(4)
    bodies: dict[str, str | None] = {}
    for i in range(130):  # 26 identical groups, upper and lower case alike
        letter = chr(97 + i % 26)
        bodies[f"letter-{i:03d}"] = letter.upper() if i % 2 else letter
    for i, body in enumerate(["", None, "   ", "\n\t", "!!!", "...---", "\u200b", "\x00\x00", "_", "é"]):
        bodies[f"blank-{i}"] = body
    bodies["token-a"] = bodies["token-b"] = "x" * 2_000_000
    bodies["token-c"] = "x" * 1_999_999 + "y"
    bodies["repeat-long"] = "word " * 100_000
    bodies["repeat-short"] = " word" * 50_000
    for name, sample in SCRIPTS.items():
        words = [f"{rng.choice(sample.split())}{rng.randrange(10**4)}" for _ in range(60)]
        bodies[f"{name}-0"] = " ".join(words)
        words[30] = "changed"  # 5 of 56 shingles: J = 51 / 61
        bodies[f"{name}-1"] = "  ".join(words) + " !"
    return bodies


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    bodies = _bodies()
    table = pa.Table.from_pylist(
        [
            {
                "doc_id": doc_id,
                "source": doc_id.split("-")[0],
                "domain": "hostile.example",
                "crawled_at": dt.datetime(2024, 1, 1) + dt.timedelta(hours=i % 5),
                "title": doc_id,
                "body": body,
            }
            for i, (doc_id, body) in enumerate(bodies.items())
        ]
    )
    build_table(work, table, batch_size=16, preset="recall")
    return work, table


def test_scores_and_clusters_equal_the_brute_force(hostile_run):
    work, table = hostile_run
    sets = qc.shingle_sets(table)
    con = duckdb.connect(str(work / "db.duckdb"), read_only=True)
    try:
        scored = con.sql("select left_doc_id, right_doc_id, jaccard from scored_pairs").fetchall()
        clusters = dict(con.sql("select doc_id, representative_doc_id from clusters").fetchall())
        released = con.sql("select count(*) from deduped_documents").fetchall()[0][0]
    finally:
        con.close()
    for left, right, jaccard in scored:
        assert jaccard == ref.jaccard(sets[left], sets[right]), (left, right)
    edges = [
        (a, b)
        for a, b in itertools.combinations(sorted(sets), 2)
        if sets[a] and sets[b] and ref.jaccard(sets[a], sets[b]) >= qc.THRESHOLD
    ]
    expected = qc.kept_for(table, edges, strict=False)
    assert clusters == expected
    assert (
        released
        == len(set(expected.values()))
        == table.num_rows - len([d for d, kept in expected.items() if d != kept])
    )
    # the planted pairs are there: letters by case, the 2 MB tokens, the repeated word, each script
    assert expected["letter-001"] == expected["letter-027"]
    assert expected["token-a"] == expected["token-b"] != expected["token-c"]
    assert expected["repeat-long"] == expected["repeat-short"]
    for name in SCRIPTS:
        assert expected[f"{name}-0"] == expected[f"{name}-1"], name
