"""MinHash signatures and band keys: deterministic, batch-independent, and unbiased Jaccard estimators."""

import random

import numpy as np
import pyarrow as pa
import pytest

from webdedup.core import fingerprint as fp
from webdedup.core import reference as ref
from webdedup.core import stream

WORDS = [f"w{i}" for i in range(400)]


def _doc(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _batch(bodies, start=0):
    return pa.record_batch({"doc_id": [f"d{start + i:04d}" for i in range(len(bodies))], "body": bodies})


def test_fingerprints_are_deterministic_and_independent_of_batching():
    rng = random.Random(3)
    bodies = [_doc(rng, rng.randint(0, 60)) for _ in range(40)] + ["", "!!", "one", "a b c d"]
    params = fp.FingerprintParams.spec()
    whole = fp.fingerprint_batch(_batch(bodies), params).to_pylist()
    again = fp.fingerprint_batch(_batch(bodies), params).to_pylist()
    split = (
        fp.fingerprint_batch(_batch(bodies[:7]), params).to_pylist()
        + fp.fingerprint_batch(_batch(bodies[7:], start=7), params).to_pylist()
    )
    assert whole == again == split


def test_streaming_driver_keeps_order_and_rows():
    rng = random.Random(4)
    bodies = [_doc(rng, 30) for _ in range(50)]
    reader = pa.RecordBatchReader.from_batches(
        pa.schema([("doc_id", pa.string()), ("body", pa.string())]),
        [_batch(bodies[i : i + 7], start=i) for i in range(0, 50, 7)],
    )
    settings = stream.RunSettings(params=fp.FingerprintParams.spec(), batch_size=2048, workers=2)
    streamed = stream.stream_fingerprints(reader, settings).read_all().to_pylist()
    direct = fp.fingerprint_batch(_batch(bodies), fp.FingerprintParams.spec()).to_pylist()
    assert streamed == direct


def test_batches_of_long_pages_are_cut_by_body_bytes_with_the_same_results():
    rng = random.Random(5)
    bodies = [_doc(rng, rng.choice([0, 3, 40, 400])) for _ in range(60)] + [None, "x" * 5000]
    batch = _batch(bodies)
    sizes = [len(body.encode()) if body else 0 for body in bodies]
    slices = list(stream.byte_bounded([batch], 1000))
    assert pa.Table.from_batches(slices).equals(pa.Table.from_batches([batch]))  # every row, in order
    for piece in slices:
        offset = piece.column("doc_id")[0].as_py()
        piece_sizes = sizes[int(offset[1:]) : int(offset[1:]) + piece.num_rows]
        assert sum(piece_sizes) <= 1000 or piece.num_rows == 1
        assert (
            piece.column("body").buffers()[2].address == batch.column("body").buffers()[2].address
        )  # no copy
    assert len(slices) > 10
    assert list(stream.byte_bounded([batch], 10**9)) == [batch]
    for workers in (1, 2):
        settings = stream.RunSettings(
            params=fp.FingerprintParams.spec(), batch_size=2048, workers=workers, max_batch_bytes=1000
        )
        reader = pa.RecordBatchReader.from_batches(batch.schema, [batch])
        streamed = stream.stream_fingerprints(reader, settings).read_all()
        assert streamed.to_pylist() == fp.fingerprint_batch(batch, settings.params).to_pylist()


def test_empty_documents_follow_the_spec():
    out = fp.fingerprint_batch(
        _batch(["", "   ", "?!", "two words"]), fp.FingerprintParams.spec()
    ).to_pylist()
    sets = fp.shingle_set_batch(
        _batch(["", "   ", "?!", "two words"]), fp.FingerprintParams.spec()
    ).to_pylist()
    for row, shingles in zip(out[:3], sets[:3], strict=True):
        assert row["token_count"] == 0
        assert row["shingle_count"] == 0
        assert shingles["shingle_set"] == []
        assert row["signature"] == [0] * 64  # the spec's minhash_signature of an empty set
    assert out[3]["shingle_count"] == 1  # fewer tokens than the shingle size: one whole-document shingle
    assert all(v >= 0 for v in out[3]["signature"])


def test_identical_sets_share_signature_bands_and_key():
    out = fp.fingerprint_batch(
        _batch(["Hello, World again and again", "hello world AGAIN and again!"]), fp.FingerprintParams.spec()
    ).to_pylist()
    assert out[0]["signature"] == out[1]["signature"]
    assert out[0]["band_keys"] == out[1]["band_keys"]
    assert out[0]["shingle_set_key"] == out[1]["shingle_set_key"] != 0


def test_seed_changes_signature_but_not_shingles():
    body = ["the quick brown fox jumps over the lazy dog again and again"]
    a = fp.fingerprint_batch(_batch(body), fp.FingerprintParams.spec(seed=1)).to_pylist()[0]
    b = fp.fingerprint_batch(_batch(body), fp.FingerprintParams.spec(seed=2)).to_pylist()[0]
    set_a = fp.shingle_set_batch(_batch(body), fp.FingerprintParams.spec(seed=1)).to_pylist()[0]
    set_b = fp.shingle_set_batch(_batch(body), fp.FingerprintParams.spec(seed=2)).to_pylist()[0]
    assert set_a == set_b
    assert a["signature"] != b["signature"]


def test_shingle_sets_are_the_sets_the_fingerprints_were_computed_from():
    """Same counts; the set's Jaccard equals the spec's string-set Jaccard; the stream keeps order."""
    rng = random.Random(6)
    bodies = [_doc(rng, rng.randint(0, 40)) for _ in range(30)] + ["", "Ünïcödé Ωμέγα text here ok"]
    params = fp.FingerprintParams.spec()
    prints = fp.fingerprint_batch(_batch(bodies), params).to_pylist()
    reader = pa.RecordBatchReader.from_batches(
        pa.schema([("doc_id", pa.string()), ("body", pa.string())]),
        [_batch(bodies[i : i + 5], start=i) for i in range(0, len(bodies), 5)],
    )
    sets = (
        stream.stream_shingle_sets(reader, stream.RunSettings(params=params, batch_size=2048, workers=1))
        .read_all()
        .to_pylist()
    )
    assert [row["doc_id"] for row in sets] == [row["doc_id"] for row in prints]
    for printed, shingles, body in zip(prints, sets, bodies, strict=True):
        assert shingles["shingle_count"] == printed["shingle_count"] == len(shingles["shingle_set"])
        unsigned = [value % 2**64 for value in shingles["shingle_set"]]
        assert unsigned == sorted(set(unsigned))  # distinct, in unsigned order, stored as signed BIGINT
        assert len(shingles["shingle_set"]) == len(ref.token_shingles(ref.normalize_text(body).split()))
    for i in range(len(bodies) - 1):
        left, right = (ref.token_shingles(ref.normalize_text(b).split()) for b in bodies[i : i + 2])
        hashed = ref.jaccard(set(sets[i]["shingle_set"]), set(sets[i + 1]["shingle_set"]))
        assert hashed == ref.jaccard(left, right)


def test_band_keys_match_exactly_when_band_values_match():
    rng = np.random.default_rng(5)
    sig = rng.integers(0, 2**62, size=(6, 64), dtype=np.int64).astype(np.uint64)
    sig[1] = sig[0]
    sig[2, :8] = sig[0, :8]  # same first band only
    keys = fp.band_keys(sig, 8)
    assert (keys[1] == keys[0]).all()
    assert keys[2, 0] == keys[0, 0]
    assert (keys[2, 1:] != keys[0, 1:]).all()
    assert (keys >= 0).all()


def test_permutations_are_odd_multipliers_and_seeded():
    a, b = fp.permutations(64, 42)
    assert (a % 2 == 1).all()
    a2, b2 = fp.permutations(64, 42)
    assert (a == a2).all() and (b == b2).all()
    assert not (fp.permutations(64, 43)[0] == a).all()


def test_signature_overlap_estimates_jaccard_without_bias():
    """Across many pairs with known Jaccard, the mean signature overlap matches the mean Jaccard."""
    rng = random.Random(11)
    lefts, rights, truths = [], [], []
    for _ in range(300):
        base = [f"t{rng.randrange(10**9)}" for _ in range(80)]
        edited = list(base)
        for pos in rng.sample(range(80), rng.randint(0, 30)):
            edited[pos] = f"t{rng.randrange(10**9)}"
        lefts.append(" ".join(base))
        rights.append(" ".join(edited))
        truths.append(ref.jaccard(ref.token_shingles(base), ref.token_shingles(edited)))
    params = fp.FingerprintParams.spec(num_hashes=256, rows_per_band=8)
    out = fp.fingerprint_batch(_batch(lefts + rights), params).to_pylist()
    overlaps = [ref.signature_overlap(out[i]["signature"], out[i + 300]["signature"]) for i in range(300)]
    errors = np.array(overlaps) - np.array(truths)
    assert abs(errors.mean()) < 0.01
    assert np.abs(errors).max() < 0.15


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_hashes": 64, "rows_per_band": 7}, "num_hashes (64) must be divisible by rows_per_band (7)"),
        ({"shingle_size": 0}, "shingle_size must be >= 1, got 0"),
        ({"num_hashes": 0}, "num_hashes must be >= 1, got 0"),
        ({"seed": -1}, "seed must be in [0, 2**63), got -1"),
    ],
)
def test_invalid_parameters_are_rejected_with_a_clear_message(kwargs, message):
    with pytest.raises(fp.ParameterError) as error:
        fp.FingerprintParams.spec(**kwargs)
    assert str(error.value) == message


def test_parameters_from_strings_reject_non_integers():
    assert (
        fp.FingerprintParams.from_strings(
            shingle_size="5", num_hashes="128", rows_per_band="4", seed="42"
        ).bands
        == 32
    )
    with pytest.raises(fp.ParameterError, match="num_hashes must be an integer, got '64; drop table x'"):
        fp.FingerprintParams.from_strings(num_hashes="64; drop table x")
