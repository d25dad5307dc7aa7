"""The missed-pair audit finds exactly the pairs an independent brute force finds, and reports LSH recall."""

import itertools
from collections import defaultdict

import duckdb
import pytest

from benchmarks.generate_corpus import generate
from tests.python.helpers.dbt_runner import build_table
from webdedup.core import reference as ref

pytestmark = pytest.mark.dbt


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    work = tmp_path_factory.mktemp("audit")
    table = generate(1200, seed=3, near_threshold_share=0.15, hot_bucket=30)
    build_table(work, table, audit=True)
    return work, table


def _brute_force_pairs(table, threshold=0.7):
    """All document pairs with reference Jaccard >= threshold (inverted index, then exact)."""
    ids = table["doc_id"].to_pylist()
    sets = {
        d: frozenset(ref.token_shingles(ref.normalize_text(b).split()))
        for d, b in zip(ids, table["body"].to_pylist(), strict=True)
    }
    index = defaultdict(set)
    for d, s in sets.items():
        for shingle in s:
            index[shingle].add(d)
    pairs = {}
    for d, s in sets.items():
        for other in set().union(*(index[x] for x in s)) if s else ():
            if d < other and (d, other) not in pairs:
                j = ref.jaccard(sets[d], sets[other])
                if j >= threshold:
                    pairs[(d, other)] = j
    return pairs


def test_audit_equals_brute_force_and_recall_adds_up(audited):
    work, table = audited
    con = duckdb.connect(str(work / "db.duckdb"), read_only=True)
    try:
        groups = dict(
            con.sql("select doc_id, group_anchor_doc_id from main_internal.int_shingle_set_groups").fetchall()
        )
        audit = {
            (a, b): (j, found)
            for a, b, j, found in con.sql(
                "select left_anchor_doc_id, right_anchor_doc_id, jaccard, is_lsh_candidate "
                "from audit_pair_jaccards"
            ).fetchall()
        }
        recall = dict(
            con.sql("select jaccard_bucket, [true_pairs, lsh_pairs] from audit_lsh_recall").fetchall()
        )
    finally:
        con.close()
    brute = _brute_force_pairs(table)
    # every brute-force pair of distinct sets is an audited anchor pair with the same Jaccard
    anchor_pairs = {}
    for (a, b), j in brute.items():
        ga, gb = sorted((groups[a], groups[b]))
        if ga != gb:
            anchor_pairs[(ga, gb)] = j
    assert set(audit) == set(anchor_pairs)
    for key, (j, _) in audit.items():
        assert j == anchor_pairs[key]
    assert recall["all"][0] == len(brute)
    members = defaultdict(int)
    for anchor in groups.values():
        members[anchor] += 1
    found_pairs = sum(members[a] * members[b] for (a, b), (_, found) in audit.items() if found)
    identical = sum(n * (n - 1) // 2 for n in members.values())
    assert recall["all"][1] == found_pairs + identical
    assert recall["all"][1] < recall["all"][0]  # near-threshold pairs: the default banding misses some


def test_every_accepted_pair_is_a_true_pair(audited):
    work, table = audited
    brute = _brute_force_pairs(table)
    accepted = duckdb.sql(f"select left_doc_id, right_doc_id from '{work / 'out' / 'duplicate_pairs.csv'}'")
    assert set(accepted.fetchall()) <= set(brute)
    assert list(itertools.islice(brute, 1))
