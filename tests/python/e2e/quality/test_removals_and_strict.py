"""The removal log, strict clustering and the per-source guardrail, each against an independent brute
force (tests/python/helpers/quality_corpora.py: the spec's reference functions, union-find, BFS) on a
generated corpus with chains and two sources of copies (96% and 90% removable)."""

from __future__ import annotations

import itertools
import json

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.python.helpers import quality_corpora as qc
from tests.python.helpers.dbt_runner import run_dbt

pytestmark = pytest.mark.dbt


def _build(work, table, clustering):
    run = work / clustering
    run.mkdir()
    result = run_dbt(
        ["build", "--target-path", str(run / "target")],
        db_path=run / "db.duckdb",
        dbt_vars={
            "documents_path": str(work / "docs.parquet"),
            "output_dir": str(run / "out"),
            "preset": "recall",
            "clustering": clustering,
        },
    )
    con = duckdb.connect(str(run / "db.duckdb"), read_only=True)
    try:
        edges = con.sql("select left_doc_id, right_doc_id, jaccard from duplicate_pairs").fetchall()
        clusters = con.sql("select doc_id, representative_doc_id, is_representative from clusters").fetchall()
        rates = con.sql(
            "select dimension, dimension_value, pages, removed, removed_share from source_removal_rates"
        ).fetchall()
    finally:
        con.close()
    removals = pq.read_table(run / "out" / "removals.parquet").to_pylist()
    results = json.loads((run / "target" / "run_results.json").read_text())["results"]
    return {
        "edges": edges,
        "clusters": clusters,
        "rates": rates,
        "removals": removals,
        "results": results,
        "log": result.stdout,
        "manifest": json.loads((run / "out" / "manifest.json").read_text()),
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("quality")
    table = qc.quality_corpus()
    pq.write_table(table, work / "docs.parquet")
    runs = {mode: _build(work, table, mode) for mode in ("components", "strict")}
    return table, runs


def _edge_list(run):
    return [(a, b) for a, b, _ in run["edges"]]


def test_accepted_edges_have_the_reference_jaccard(corpus):
    table, runs = corpus
    sets = qc.shingle_sets(table)
    for mode in runs:
        for a, b, j in runs[mode]["edges"]:
            assert j == pytest.approx(qc.jaccard(sets, a, b), abs=1e-12)
            assert j >= qc.THRESHOLD


@pytest.mark.parametrize("mode", ["components", "strict"])
def test_clusters_equal_brute_force(corpus, mode):
    table, runs = corpus
    run = runs[mode]
    expected = qc.kept_for(table, _edge_list(run), strict=mode == "strict")
    assert {doc: rep for doc, rep, _ in run["clusters"]} == expected


@pytest.mark.parametrize("mode", ["components", "strict"])
def test_removals_log_every_removed_document_once_with_jaccard_and_shortest_path(corpus, mode):
    table, runs = corpus
    run = runs[mode]
    sets = qc.shingle_sets(table)
    edges = _edge_list(run)
    edge_set = {frozenset(e) for e in edges}
    kept = qc.kept_for(table, edges, strict=mode == "strict")
    removed = {doc: rep for doc, rep in kept.items() if doc != rep}
    rows = run["removals"]
    assert sorted(r["removed_doc_id"] for r in rows) == sorted(removed)  # all, none twice
    key = run["manifest"]["settings"]["settings_key"]
    assert f"clustering={mode}" in key and "threshold=0.7" in key
    hops_from = {}
    for row in rows:
        doc, rep = row["removed_doc_id"], row["kept_doc_id"]
        assert rep == removed[doc]
        assert row["jaccard"] == pytest.approx(qc.jaccard(sets, doc, rep), abs=1e-12)
        assert row["settings_key"] == key
        path = row["edge_path"]
        assert path[0] == doc and path[-1] == rep and len(set(path)) == len(path)
        assert all(frozenset(step) in edge_set for step in itertools.pairwise(path))
        if rep not in hops_from:
            hops_from[rep] = qc.shortest_hops(edges, rep)
        assert row["hops"] == len(path) - 1 == hops_from[rep][doc]
    if mode == "strict":
        assert all(row["jaccard"] >= qc.THRESHOLD for row in rows)
    else:  # the corpus has chains: some removals under components are below the threshold
        assert any(row["jaccard"] < qc.THRESHOLD for row in rows)


def test_strict_keeps_co_clustered_pair_recall_within_two_percent(corpus):
    table, runs = corpus
    generated = {d for d in table["doc_id"].to_pylist() if d.startswith("g")}  # generate()'s pages
    pairs = {}
    for mode in runs:
        kept = {doc: rep for doc, rep, _ in runs[mode]["clusters"] if doc in generated}
        pairs[mode] = qc.co_clustered_pairs(kept)
    assert pairs["strict"] <= pairs["components"]
    recall = len(pairs["strict"]) / len(pairs["components"])
    print(f"co-clustered pair recall strict / components on generate(): {recall:.4f}")
    assert recall >= 0.98


def test_strict_keeps_the_most_co_clustered_pairs_any_strict_partition_keeps_on_chains(corpus):
    """On the explicit chains (about J 0.8 to a neighbour, below 0.7 two or three steps away) strict
    keeps, per chain, as many co-clustered pairs as the best strict partition (exhaustive search)."""
    table, runs = corpus
    sets = qc.shingle_sets(table)
    kept = {doc: rep for doc, rep, _ in runs["strict"]["clusters"]}
    chains = {}
    for doc in table["doc_id"].to_pylist():
        if doc.startswith("chain"):
            chains.setdefault(doc.split("-")[0], []).append(doc)
    assert len(chains) == 6
    split = 0
    for docs in chains.values():
        split += len({kept[d] for d in docs}) > 1
        best = qc.best_strict_partition(docs, lambda a, b: qc.jaccard(sets, a, b) >= qc.THRESHOLD)
        assert len(qc.co_clustered_pairs({d: kept[d] for d in docs})) == best
    assert split >= 4  # chains strict has to split (5 of the 6 with this seed)


def test_guardrail_warns_on_the_source_losing_96_percent_and_not_90(corpus):
    table, runs = corpus
    run = runs["components"]
    rates = {(dim, value): (pages, removed, share) for dim, value, pages, removed, share in run["rates"]}
    # brute force: pages and removed per source and domain
    kept = qc.kept_for(table, _edge_list(run), strict=False)
    warned = set()
    for dim in ("source", "domain"):
        values = table[dim].to_pylist()
        for value in set(values):
            docs = [d for d, v in zip(table["doc_id"].to_pylist(), values, strict=True) if v == value]
            removed = sum(kept[d] != d for d in docs)
            assert rates[(dim, value)][:2] == (len(docs), removed)
            if len(docs) >= 100 and removed / len(docs) > 0.95:
                warned.add((dim, value))
    assert rates[("source", "heavy")] == (100, 96, 0.96)
    assert rates[("source", "light")] == (100, 90, 0.9)
    # heavy (96%) is warned about, light (90%) is not; generate()'s 120 originals all lose to a newer
    # near-threshold variant, so source 'original' (100%) is warned about too
    assert {("source", "heavy"), ("domain", "heavy.example"), ("source", "original")} <= warned
    assert not {("source", "light"), ("domain", "light.example")} & warned
    (guardrail,) = [
        r for r in run["results"] if r["unique_id"].startswith("test.web_text_dedup.assert_no_source")
    ]
    assert guardrail["status"] == "warn"
    assert guardrail["failures"] == len(warned)
    assert "Warning in test assert_no_source_loses_most_pages" in run["log"]
