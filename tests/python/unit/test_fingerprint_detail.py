"""webdedup.core.fingerprint_detail (var fingerprint_detail: full) against the spec's reference functions."""

from __future__ import annotations

import csv
import random

import pyarrow as pa
import pytest

from tests.python.helpers.dbt_runner import PROJECT_ROOT
from webdedup.core import reference as ref
from webdedup.core.fingerprint import FingerprintParams
from webdedup.core.fingerprint_detail import DETAIL_SCHEMA, detail_batch, shingles


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
def test_shingles_are_the_specs_token_shingles_sorted(size):
    rng = random.Random(size)
    for length in range(12):
        for _ in range(20):
            tokens = [rng.choice("abcd") for _ in range(length)]  # repeats make duplicate shingles
            assert shingles(tokens, size) == sorted(ref.token_shingles(tokens, size=size)), tokens


def test_detail_batch_matches_the_reference_on_the_fixture_and_edge_cases():
    with open(PROJECT_ROOT / "seeds" / "documents.csv", newline="", encoding="utf-8") as handle:
        rows = [(r["doc_id"], r["body"]) for r in csv.DictReader(handle)]
    rows += [("empty", ""), ("null", None), ("short", "Ça  va? Très_bien!"), ("sigma", "ΟΔΟΣ ΟΔΟΣ.")]
    batch = pa.record_batch(
        {"doc_id": [r[0] for r in rows], "body": pa.array([r[1] for r in rows], pa.string())}
    )
    result = detail_batch(batch, FingerprintParams.spec())
    assert result.schema == DETAIL_SCHEMA
    for (doc_id, body), got in zip(rows, result.to_pylist(), strict=True):
        text = ref.normalize_text(body)
        assert got == {
            "doc_id": doc_id,
            "normalized_text": text,
            "shingles": sorted(ref.token_shingles(text.split())),
        }
