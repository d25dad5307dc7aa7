"""End to end: `dbt build` on the 24-document fixture, checked against the spec and its reference code."""

import csv
import hashlib
import itertools
import json

import duckdb
import pytest

from tests.python.conftest import PROJECT_ROOT, run_dbt
from webdedup import reference as ref
from webdedup.manifest import OUTPUT_FILES

OUTPUTS = [*OUTPUT_FILES, "manifest.json"]


def _fixture_documents():
    with open(PROJECT_ROOT / "seeds" / "documents.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _reference_sets(rows):
    return {r["doc_id"]: ref.token_shingles(ref.normalize_text(r["body"]).split()) for r in rows}


pytestmark = pytest.mark.dbt


def test_all_outputs_are_written(fixture_run):
    for name in OUTPUTS:
        assert (fixture_run["output_dir"] / name).stat().st_size > 0, name


def test_spec_result_table(fixture_run):
    with open(fixture_run["output_dir"] / "candidate_summary.csv", newline="") as handle:
        summary = next(csv.DictReader(handle))
    expected = {
        "documents": 24,
        "possible_pairs": 276,
        "candidate_pairs": 18,
        "cross_domain_candidates": 18,
        "accepted_edges": 18,
        "exact_duplicate_edges": 6,
        "near_duplicate_edges": 12,
        "duplicate_clusters": 6,
        "singleton_clusters": 6,
        "representatives": 12,
    }
    assert {k: int(summary[k]) for k in expected} == expected
    assert float(summary["candidate_reduction_pct"]) == 93.48


def test_duplicate_pairs_are_the_brute_force_pairs_above_threshold(fixture_run):
    """Brute force over all 276 pairs with the spec's functions gives exactly the accepted edges."""
    sets = _reference_sets(_fixture_documents())
    brute = {
        (a, b): ref.jaccard(sets[a], sets[b])
        for a, b in itertools.combinations(sorted(sets), 2)
        if ref.jaccard(sets[a], sets[b]) >= ref.SHINGLE_JACCARD_THRESHOLD
    }
    with open(fixture_run["output_dir"] / "duplicate_pairs.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["left_doc_id"], r["right_doc_id"]): float(r["jaccard"]) for r in rows} == pytest.approx(brute)
    assert list(rows[0])[:7] == [
        "left_doc_id",
        "right_doc_id",
        "shared_bands",
        "jaccard",
        "signature_overlap",
        "is_duplicate",
        "reason",
    ]


def test_scored_jaccard_equals_reference_for_every_pair(fixture_run):
    sets = _reference_sets(_fixture_documents())
    scored = fixture_run["output_dir"] / "scored_pairs.parquet"
    rows = duckdb.sql(f"select left_doc_id, right_doc_id, jaccard from '{scored}'").fetchall()
    assert len(rows) == 18
    for left, right, jaccard in rows:
        assert jaccard == ref.jaccard(sets[left], sets[right])


def test_clusters_and_representatives(fixture_run):
    docs = {r["doc_id"]: r for r in _fixture_documents()}
    with open(fixture_run["output_dir"] / "clusters.csv", newline="") as handle:
        clusters = list(csv.DictReader(handle))
    assert sorted(r["doc_id"] for r in clusters) == sorted(docs)
    assert list(clusters[0])[:3] == ["cluster_id", "doc_id", "cluster_size"]
    kept = duckdb.sql(
        f"select doc_id, cluster_id, cluster_size, source, title, body "
        f"from '{fixture_run['output_dir'] / 'deduped_documents.parquet'}' order by doc_id"
    ).fetchall()
    assert len(kept) == 12
    multi = [row for row in kept if row[2] == 3]
    assert sorted(row[3] for row in multi) == ["canonical"] * 6
    assert sorted(row[3] for row in kept if row[2] == 1) == ["unrelated"] * 6
    for doc_id, cluster_id, _size, _source, title, body in kept:
        assert (title, body) == (docs[doc_id]["title"], docs[doc_id]["body"])
        assert cluster_id.startswith("cluster-")


def test_manifest_records_settings_counts_and_hashes(fixture_run):
    manifest = json.loads((fixture_run["output_dir"] / "manifest.json").read_text())
    assert manifest["source"]["classification"] == "seed_fixture"
    seed_bytes = (PROJECT_ROOT / "seeds" / "documents.csv").read_bytes()
    expected_input = hashlib.sha256(
        b"documents.csv\0" + hashlib.sha256(seed_bytes).hexdigest().encode()
    ).hexdigest()
    assert manifest["source"]["input_sha256"] == expected_input
    assert manifest["settings"]["num_hashes"] == 64 and manifest["settings"]["rows_per_band"] == 8
    assert manifest["counts"]["representatives"] == 12
    for entry in manifest["outputs"]:
        data = (fixture_run["output_dir"] / entry["file"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert set(manifest["versions"]) >= {"dbt-core", "dbt-duckdb", "duckdb", "pyarrow"}


def test_rerun_gives_byte_identical_outputs(fixture_run, tmp_path):
    output_dir = tmp_path / "output"
    run_dbt(["build"], db_path=tmp_path / "again.duckdb", dbt_vars={"output_dir": str(output_dir)})
    for name in OUTPUTS[:-1]:
        first = (fixture_run["output_dir"] / name).read_bytes()
        assert (output_dir / name).read_bytes() == first, name
    first = json.loads((fixture_run["output_dir"] / "manifest.json").read_text())
    second = json.loads((output_dir / "manifest.json").read_text())
    first.pop("generated_at"), second.pop("generated_at")
    assert first == second


def test_published_database_holds_every_model_for_analysts(fixture_run):
    con = duckdb.connect(str(fixture_run["work"] / "published" / "dedup.duckdb"), read_only=True)
    try:
        tables = {row[0] for row in con.sql("select table_name from information_schema.tables").fetchall()}
        assert {
            "stg_documents",
            "int_fingerprints",
            "scored_pairs",
            "clusters",
            "deduped_documents",
        } <= tables
        assert con.sql("select count(*) from deduped_documents").fetchall() == [(12,)]
    finally:
        con.close()


def test_s_curve_and_advisor_follow_the_banding_formula(fixture_run):
    con = duckdb.connect(str(fixture_run["db_path"]), read_only=True)
    try:
        curve = dict(con.sql("select jaccard, p_candidate from lsh_s_curve").fetchall())
        advisor = con.sql("select bands, rows_per_band, p_candidate_at_threshold from lsh_advisor").fetchall()
        recall = con.sql("select accepted_pairs, expected_pair_recall from lsh_recall_estimate").fetchall()
    finally:
        con.close()
    assert len(curve) == 101
    for j, p in curve.items():
        assert p == pytest.approx(1 - (1 - j**8) ** 8, abs=1e-12)
    assert round(curve[0.7], 2) == 0.38 and round(curve[0.75], 2) == 0.57 and round(curve[0.8], 2) == 0.77
    assert sorted((b, r) for b, r, _ in advisor) == [
        (1, 64),
        (2, 32),
        (4, 16),
        (8, 8),
        (16, 4),
        (32, 2),
        (64, 1),
    ]
    for b, r, p in advisor:
        assert p == pytest.approx(1 - (1 - 0.7**r) ** b)
    assert recall[0][0] == 18 and recall[0][1] > 0.99


def test_explain_pair_shows_the_path_or_never_a_candidate(fixture_run):
    def explain(left, right):
        return run_dbt(
            ["run-operation", "explain_pair", "--args", f"{{left: {left}, right: {right}}}"],
            db_path=fixture_run["db_path"],
        ).stdout

    mirror_revision = explain("doc-013", "doc-007")
    assert "explain_pair doc-007 ~ doc-013" in mirror_revision
    assert "decision: duplicate (reason jaccard_and_minhash)" in mirror_revision
    assert "path of accepted edges: doc-007 -> doc-013" in mirror_revision
    singletons = explain("doc-019", "doc-020")
    assert "decision: never a candidate (no shared LSH band), so never scored" in singletons
    assert "different clusters: no path of accepted edges joins them" in singletons
