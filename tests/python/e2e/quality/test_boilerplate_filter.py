"""boilerplate_filter on generated templated sites (tests/python/helpers/templated_sites.py): pages that
share a large navigation block and differ in a short body, with planted mirrors (same site and another
domain) and one-word revisions, against an independent brute force of the filter and of the clusters.

With the default (no filter) the clusters are those of the unfiltered texts, where distinct pages of a
site merge; with the filter no two distinct pages merge and every planted copy still does, and a build
that first saw part of the corpus and then all of it (incremental) gives the full corpus' result."""

from __future__ import annotations

import duckdb
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.python.helpers import templated_sites as ts
from tests.python.helpers.dbt_runner import run_dbt
from tests.python.helpers.project import project_vars

pytestmark = pytest.mark.dbt


def _explain(run, left, right) -> str:
    return run_dbt(
        ["run-operation", "explain_pair", "--args", f"{{left: {left}, right: {right}, database: build}}"],
        db_path=run / "db.duckdb",
    ).stdout


def _build(run, corpus, **extra):
    run.mkdir(exist_ok=True)
    run_dbt(
        ["build"],
        db_path=run / "db.duckdb",
        dbt_vars={"documents_path": str(corpus), "output_dir": str(run / "out"), "preset": "recall", **extra},
    )
    con = duckdb.connect(str(run / "db.duckdb"), read_only=True)
    try:
        clusters = dict(con.sql("select doc_id, cluster_id from clusters").fetchall())
        texts = dict(con.sql("select doc_id, body from main_internal.int_shingle_texts").fetchall())
        key = con.sql("select settings_key from main_internal.int_run_settings").fetchall()[0][0]
    finally:
        con.close()
    return clusters, texts, key


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    work = tmp_path_factory.mktemp("boilerplate")
    table, plants = ts.templated_sites()
    pq.write_table(table, work / "docs.parquet")
    default = _build(work / "default", work / "docs.parquet")
    # the filtered build first sees two of the three sites, then (incremental) the whole corpus
    part = table.filter(pc.invert(pc.starts_with(table["doc_id"], "site2")))
    pq.write_table(part, work / "part.parquet")
    filtered_run = work / "filtered"
    _build(filtered_run, work / "part.parquet", boilerplate_filter=True)
    pq.write_table(table, work / "part.parquet")
    filtered = _build(filtered_run, work / "part.parquet", boilerplate_filter=True)
    return table, plants, default, filtered, work


def _same_partition(clusters: dict, components: dict) -> bool:
    pairs = {(clusters[d], components[d]) for d in clusters}
    return len({a for a, _ in pairs}) == len(pairs) == len({b for _, b in pairs})


def test_default_is_unfiltered_and_templates_merge_distinct_pages(sites):
    table, plants, (clusters, texts, key), _, _ = sites
    bodies = dict(zip(table["doc_id"].to_pylist(), table["body"].to_pylist(), strict=True))
    assert texts == bodies
    assert "boilerplate_filter=false" in key
    components = ts.duplicate_components(bodies)
    assert _same_partition(clusters, components)
    false_merges, missed = ts.merge_errors(components, plants)
    assert false_merges > 0 and missed == 0  # the problem the filter solves


def test_filter_keeps_distinct_pages_apart_and_planted_copies_together(sites):
    table, plants, _, (clusters, texts, key), _ = sites
    defaults = project_vars()
    expected = ts.filtered_texts(table, defaults["boilerplate_max_share"], defaults["boilerplate_min_pages"])
    assert texts == expected  # after an incremental build: the full corpus' filter
    assert "boilerplate_filter=true" in key
    components = ts.duplicate_components(expected)
    assert _same_partition(clusters, components)
    assert ts.merge_errors(components, plants) == (0, 0)
    kinds = {kind for _, kind in plants.values()}
    assert kinds == {"mirror", "mirror_elsewhere", "revision"}
    for copy, (original, _) in plants.items():
        assert clusters[copy] == clusters[original]
    originals = [d for d in clusters if d not in plants]
    assert len({clusters[d] for d in originals}) == len(originals)


def test_explain_pair_scores_the_text_the_build_shingled(sites):
    """explain_pair reports the Jaccard of the filtered texts when the build filtered (and of the bodies
    when it did not), with the settings that database was built with, not the invocation's vars."""
    _, plants, (default_clusters, default_texts, _), (_, filtered_texts, _), work = sites
    # two distinct pages of one site that the template merged without the filter
    left, right = next(
        (a, b)
        for a in sorted(default_clusters)
        for b in sorted(default_clusters)
        if a < b and a not in plants and b not in plants and default_clusters[a] == default_clusters[b]
    )
    runs = ((work / "default", default_texts, False), (work / "filtered", filtered_texts, True))
    for run, texts, filtered in runs:
        out = _explain(run, left, right)
        expected = ts.reference_jaccard(texts[left], texts[right])
        jaccard = float(out.split("exact Jaccard: ", 1)[1].split(" ", 1)[0])
        assert jaccard == pytest.approx(expected, abs=1e-12), out
        assert ("boilerplate_filter=true" in out) == filtered
        assert ("of the text left after boilerplate_filter" in out) == filtered
    assert (
        ts.reference_jaccard(filtered_texts[left], filtered_texts[right])
        < 0.7
        <= ts.reference_jaccard(default_texts[left], default_texts[right])
    )
