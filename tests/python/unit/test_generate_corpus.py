"""Tests for benchmarks/generate_corpus.py and benchmarks/baselines.py (small corpora, < 20 s)."""

from __future__ import annotations

import hashlib
import itertools
import random
import sys
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

if str(Path(__file__).resolve().parents[2]) not in sys.path:  # make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import baselines, generate_corpus
from webdedup.core.reference import jaccard, normalize_text, token_shingles

DOCS = 500
HOT = 6
NEAR_SHARE = 0.04


def _shingles(body: str) -> set[str]:
    return token_shingles(normalize_text(body).split())


def _ref_jaccard(left: str, right: str) -> float:
    return jaccard(_shingles(left), _shingles(right))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    return generate_corpus.generate(DOCS, seed=7, hot_bucket=HOT, near_threshold_share=NEAR_SHARE)


@pytest.fixture(scope="module")
def groups(corpus: pa.Table) -> dict[str, list[dict]]:
    members: dict[str, list[dict]] = defaultdict(list)
    for row in corpus.to_pylist():
        if row["group_id"] is not None:
            members[row["group_id"]].append(row)
    return members


def _pairs_with_original(groups: dict[str, list[dict]], source: str) -> list[tuple[dict, dict]]:
    pairs = []
    for members in groups.values():
        originals = [m for m in members if m["source"] == "original"]
        pairs.extend((originals[0], m) for m in members if m["source"] == source)
    return pairs


def test_schema_ids_and_sources(corpus: pa.Table) -> None:
    assert corpus.column_names == ["doc_id", "source", "domain", "crawled_at", "title", "body", "group_id"]
    assert corpus.num_rows == DOCS
    ids = corpus.column("doc_id").to_pylist()
    assert len(set(ids)) == DOCS
    assert ids == sorted(ids)
    assert ids[0] == "g0000001"
    rows = corpus.to_pylist()
    assert {r["source"] for r in rows} == set(generate_corpus.SOURCE_NAMES)
    assert all((r["group_id"] is None) == (r["source"] == "singleton") for r in rows)
    grouped = sum(r["source"] not in ("singleton", "hot_bucket") for r in rows) / (DOCS - HOT)
    assert 0.25 <= grouped <= 0.35
    words = [len(r["body"].split()) for r in rows if r["source"] != "hot_bucket"]
    assert min(words) >= 250
    assert max(words) <= 1000
    assert 500 <= sum(words) / len(words) <= 700


def test_generation_is_deterministic(tmp_path: Path, corpus: pa.Table) -> None:
    again = generate_corpus.generate(DOCS, seed=7, hot_bucket=HOT, near_threshold_share=NEAR_SHARE)
    assert again.equals(corpus)
    first = tmp_path / "a.parquet"
    second = tmp_path / "b.parquet"
    kwargs = {"seed": 7, "hot_bucket": HOT, "near_threshold_share": NEAR_SHARE, "row_group_size": 200}
    generate_corpus.write_corpus(first, DOCS, workers=1, **kwargs)
    generate_corpus.write_corpus(second, DOCS, workers=2, **kwargs)
    assert _sha256(first) == _sha256(second)
    assert pq.read_table(first).select(corpus.column_names).equals(corpus)
    other_seed = generate_corpus.generate(50, seed=8)
    assert other_seed.column("body").to_pylist() != corpus.slice(0, 50).column("body").to_pylist()


def test_near_threshold_pairs_are_between_070_and_080(groups: dict[str, list[dict]]) -> None:
    pairs = _pairs_with_original(groups, "near_threshold")
    assert len(pairs) == round(NEAR_SHARE * (DOCS - HOT))
    for original, variant in pairs:
        assert 0.70 <= _ref_jaccard(original["body"], variant["body"]) <= 0.80


def test_mirrors_revisions_and_boilerplate(groups: dict[str, list[dict]]) -> None:
    mirrors = _pairs_with_original(groups, "mirror")
    revisions = _pairs_with_original(groups, "revision")
    boilerplate = _pairs_with_original(groups, "boilerplate")
    assert mirrors
    assert revisions
    assert boilerplate
    for original, mirror in mirrors:
        assert mirror["body"] == original["body"]
        assert mirror["domain"] != original["domain"]
        assert _ref_jaccard(original["body"], mirror["body"]) == 1.0
        assert mirror["doc_id"] > original["doc_id"]
        assert mirror["crawled_at"] > original["crawled_at"]
    for original, revision in revisions:
        assert revision["body"] != original["body"]
        assert _ref_jaccard(original["body"], revision["body"]) > 0.9
        changed = sum(a != b for a, b in zip(original["body"].split(), revision["body"].split(), strict=True))
        assert 1 <= changed <= 5
    for original, variant in boilerplate:
        assert original["body"] in variant["body"]
        assert variant["domain"] != original["domain"]
        extra = len(normalize_text(variant["body"]).split()) - len(normalize_text(original["body"]).split())
        assert 10 <= extra <= 30
        assert _ref_jaccard(original["body"], variant["body"]) >= 0.8


def test_hot_bucket_and_unrelated_documents(corpus: pa.Table) -> None:
    rows = corpus.to_pylist()
    hot = [r for r in rows if r["source"] == "hot_bucket"]
    assert len(hot) == HOT
    assert len({r["body"] for r in hot}) == 1
    assert 20 <= len(normalize_text(hot[0]["body"]).split()) <= 40
    shingles = [_shingles(r["body"]) for r in rows]
    rnd = random.Random(0)
    worst = 0.0
    for _ in range(400):
        i, j = rnd.sample(range(DOCS), 2)
        gi, gj = rows[i]["group_id"], rows[j]["group_id"]
        if gi is not None and gi == gj:
            continue
        worst = max(worst, jaccard(shingles[i], shingles[j]))
    assert worst < 0.15


def test_batches_split_in_doc_id_order(tmp_path: Path) -> None:
    out = tmp_path / "corpus.parquet"
    summary = generate_corpus.write_corpus(out, 300, seed=3, batches=3, row_group_size=128, workers=1)
    paths = [Path(p) for p in summary["batches"]]
    assert [p.name for p in paths] == ["batch-001.parquet", "batch-002.parquet", "batch-003.parquet"]
    assert all(p.parent == tmp_path / "corpus" for p in paths)
    parts = [pq.read_table(p) for p in paths]
    assert [t.num_rows for t in parts] == [100, 100, 100]
    assert pa.concat_tables(parts).equals(pq.read_table(out))
    seen_groups = {g for g in parts[0].column("group_id").to_pylist() if g}
    later = [g for t in parts[1:] for g in t.column("group_id").to_pylist() if g]
    assert any(g in seen_groups for g in later), "later batches should duplicate earlier documents"


@pytest.mark.parametrize("runner", [baselines.run_datasketch, baselines.run_rensa])
def test_baselines_find_planted_groups(runner, corpus: pa.Table, groups: dict[str, list[dict]]) -> None:
    result = runner(corpus)
    assert result["documents"] == DOCS
    assert set(result["seconds"]) == {"shingles", "minhash", "lsh", "verify", "components"}
    assert result["candidate_count"] >= len(result["duplicate_pairs"])
    clusters = result["clusters"]
    planted = set()
    for members in groups.values():
        ids = sorted(m["doc_id"] for m in members)
        planted.update(itertools.combinations(ids, 2))
        core = [m for m in members if m["source"] in ("original", "mirror", "revision", "hot_bucket")]
        assert len({clusters[m["doc_id"]] for m in core}) == 1
        assert clusters[ids[0]] == ids[0]  # root = smallest doc_id
        if len({clusters[i] for i in ids}) == 1:
            newest = max(members, key=lambda m: m["crawled_at"])
            assert result["representatives"][ids[0]] == newest["doc_id"]
    assert all(left < right for left, right in result["duplicate_pairs"])
    assert result["duplicate_pairs"] <= planted  # no false positives on this corpus


@pytest.mark.parametrize("runner", [baselines.run_datasketch, baselines.run_rensa])
def test_baselines_in_chunks_equal_the_whole_corpus_at_once(runner, corpus: pa.Table, monkeypatch) -> None:
    whole = runner(corpus, keep_shingles=True)
    monkeypatch.setattr(baselines, "MINHASH_CHUNK_DOCS", 37)  # chunks that do not divide the corpus
    chunked = runner(corpus, keep_shingles=False)
    assert chunked["settings"]["kept_shingle_sets"] is False
    for key in ("duplicate_pairs", "clusters", "representatives", "candidate_count"):
        assert chunked[key] == whole[key], key


def test_long_pages_join_source_bodies_and_copy_every_seventh():
    from benchmarks import long_pages

    source = [{"doc_id": f"s{i}", "title": f"t{i}", "body": f"body {i} " * 3} for i in range(50)]
    rows = long_pages.long_pages(source, pages=15, join=4)
    assert [row["doc_id"] for row in rows][:9] == [f"long-{i:06d}" for i in range(8)] + ["long-000007-copy"]
    assert len(rows) == 15 + 2  # copies of pages 7 and 14
    bodies = {row["body"] for row in source}
    for row in rows:
        if row["doc_id"].endswith("-copy"):
            original = next(r for r in rows if r["doc_id"] == row["doc_id"][: -len("-copy")])
            assert original["body"].startswith(row["body"])
            assert len(row["body"]) == len(original["body"]) * 9 // 10
        else:
            parts = row["body"].split("\n\n")
            assert len(parts) == 4 and set(parts) <= bodies
