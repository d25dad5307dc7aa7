"""The compiled kernels (webdedup.core.kernels) against plain Python: hashlib's blake2b and Python integers
computing the hash family documented in webdedup.core.fingerprint, one document at a time."""

import hashlib
import os
import random
import subprocess
import sys

import numpy as np
import pyarrow as pa
from hypothesis import example, given, settings
from hypothesis import strategies as st

from webdedup.core import fingerprint as fp
from webdedup.core import kernels
from webdedup.core import reference as ref

M64 = 2**64 - 1
POLY = 0x9E3779B97F4A7C15
LEN_SALT = 0xD6E8FEB86659FD93
SET_SALT = 0xA0761D6478BD642F


def fmix(h):
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M64
    return h ^ (h >> 33)


def blake(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


def python_fingerprint(body: str, params: fp.FingerprintParams) -> dict:
    """Shingle set, set key and signature of one body, in plain Python (the spec's normalization)."""
    text = ref.normalize_text(body)
    tokens = text.split(" ") if text else []
    width = min(params.shingle_size, len(tokens))
    shingles = set()
    for start in range(len(tokens) - width + 1 if tokens else 0):
        acc = 0
        for token in tokens[start : start + width]:
            acc = (acc * POLY + blake(token)) & M64
        shingles.add(fmix(acc ^ ((width * LEN_SALT) & M64)))
    a, b = fp.permutations(params.num_hashes, params.seed)
    if shingles:
        signature = [
            min(((int(ai) * x + int(bi)) & M64) for x in shingles) >> 1 for ai, bi in zip(a, b, strict=True)
        ]
        total = sum(fmix(x ^ SET_SALT) for x in shingles) & M64
        key = fmix(total ^ ((len(shingles) * LEN_SALT) & M64))
        key = key - 2**64 if key >= 2**63 else key
    else:
        signature, key = [0] * params.num_hashes, 0
    return {"tokens": len(tokens), "shingles": shingles, "signature": signature, "key": key}


def kernel_fingerprints(texts, params):
    batch = pa.record_batch({"doc_id": [str(i) for i in range(len(texts))], "body": texts})
    return fp.fingerprint_batch(batch, params).to_pylist(), fp.shingle_set_batch(batch, params).to_pylist()


@given(st.binary(max_size=400))
@settings(max_examples=300, deadline=None)
@example(b"")
@example(bytes(range(16)))  # the longest text blake2b_words takes
@example(bytes(range(17)))
@example(bytes(128))  # one whole block; the next ones start the second block
@example(bytes(129))
@example(bytes(256))
def test_blake2b_equals_hashlib(data):
    array = np.frombuffer(b"xx" + data + b"yyyyyyyy", dtype=np.uint8)  # bytes either side are not read
    expected = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
    assert kernels.blake2b_64(array, 2, len(data)) == expected
    if len(data) <= 16:
        head, tail = (int.from_bytes(data[i : i + 8], "little") for i in (0, 8))
        assert kernels.blake2b_words(np.uint64(head), np.uint64(tail), len(data)) == expected


words = st.sampled_from(
    ["a", "the", "délta", "ε", "東京", "x_y", "0123456789abcdef", "0123456789abcdefg", "0123456789abcdefh"]
) | st.text(alphabet="abcé", min_size=1, max_size=40)


@given(st.lists(st.lists(words, max_size=30).map(" ".join), min_size=1, max_size=6), st.integers(1, 6))
@settings(max_examples=200, deadline=None)
def test_fingerprints_equal_plain_python(texts, shingle_size):
    params = fp.FingerprintParams.spec(shingle_size=shingle_size, num_hashes=16, rows_per_band=4, seed=5)
    prints, sets = kernel_fingerprints(texts, params)
    for text, printed, shingle_set in zip(texts, prints, sets, strict=True):
        expected = python_fingerprint(text, params)
        assert printed["token_count"] == expected["tokens"]
        assert printed["shingle_count"] == len(expected["shingles"])
        assert printed["signature"] == expected["signature"]
        assert printed["shingle_set_key"] == expected["key"]
        assert shingle_set["shingle_set"] == [
            v - 2**64 if v >= 2**63 else v for v in sorted(expected["shingles"])
        ]


ascii_texts = st.text(alphabet="ab Z9 ,.!_\t\n-", max_size=120)


@given(st.lists(ascii_texts, min_size=1, max_size=8), st.integers(1, 6))
@settings(max_examples=200, deadline=None)
def test_fingerprints_of_unnormalized_ascii_equal_plain_python(texts, shingle_size):
    """Runs of punctuation and spaces, and text starting or ending with them: plain ASCII batches are
    shingled from the mapped text before its spaces are collapsed (normalize_array's tokens_only)."""
    params = fp.FingerprintParams.spec(shingle_size=shingle_size, num_hashes=16, rows_per_band=4, seed=5)
    prints, sets = kernel_fingerprints(texts, params)
    for text, printed, shingle_set in zip(texts, prints, sets, strict=True):
        expected = python_fingerprint(text, params)
        assert printed["token_count"] == expected["tokens"]
        assert printed["signature"] == expected["signature"]
        assert printed["shingle_set_key"] == expected["key"]
        assert len(shingle_set["shingle_set"]) == len(expected["shingles"])


def python_distinct_shingles(token_hashes: list[int], shingle_size: int) -> list[int]:
    """One document's distinct shingle hashes in first-occurrence order, each window's polynomial computed
    afresh (the kernel rolls it from the previous window's)."""
    width = min(shingle_size, len(token_hashes))
    kept = []
    for start in range(len(token_hashes) - width + 1 if token_hashes else 0):
        acc = 0
        for value in token_hashes[start : start + width]:
            acc = (acc * POLY + value) & M64
        shingle = fmix(acc ^ ((width * LEN_SALT) & M64))
        if shingle not in kept:
            kept.append(shingle)
    return kept


def zero_shingle_tokens(prefix: list[int], width: int) -> list[int]:
    """``prefix`` (width - 1 token hashes) and a last token whose window hashes to 0: fmix(0) = 0, so the
    window's polynomial must equal the length salt."""
    acc = 0
    for value in prefix:
        acc = (acc * POLY + value) & M64
    return [*prefix, ((width * LEN_SALT) - acc * POLY) & M64]


token_values = st.sampled_from([0, 1, 2, M64, LEN_SALT]) | st.integers(0, M64)


@given(st.lists(st.lists(token_values, max_size=25), min_size=1, max_size=6), st.integers(1, 6), st.data())
@settings(max_examples=300, deadline=None)
def test_distinct_shingles_equal_plain_python(documents, shingle_size, data):
    """Repeated windows (few distinct tokens), documents shorter than a shingle, empty documents, and
    windows whose hash is 0 (the kernel's seen-set marks empty slots with 0)."""
    width = shingle_size
    prefix = data.draw(st.lists(token_values, min_size=width - 1, max_size=width - 1))
    zero = zero_shingle_tokens(prefix, width)
    documents = [*documents, [*zero, *zero], [1, 2, *zero, 7, *zero]]
    flat = np.array([v for doc in documents for v in doc], dtype=np.uint64)
    counts = np.array([len(doc) for doc in documents], dtype=np.int64)
    hashes, shingle_counts, set_keys = kernels.distinct_shingles(flat, counts, shingle_size)
    position = 0
    for doc, count, key in zip(documents, shingle_counts, set_keys, strict=True):
        expected = python_distinct_shingles(doc, shingle_size)
        assert [int(v) for v in hashes[position : position + count]] == expected
        total = sum(fmix(x ^ SET_SALT) for x in expected) & M64
        expected_key = fmix(total ^ ((len(expected) * LEN_SALT) & M64)) if expected else 0
        assert int(key) & M64 == expected_key
        position += count
    assert position == len(hashes)
    assert 0 in python_distinct_shingles(zero + zero, shingle_size)


def test_token_buffer_holds_a_batch_of_one_letter_documents(tmp_path):
    """A batch of many one-byte documents has more tokens than half its bytes: the kernels, compiled
    with bounds checks in a fresh process, must stay inside their arrays (and agree with Python)."""
    script = (
        "import numpy as np\n"
        "from webdedup.core import kernels\n"
        "data = np.frombuffer(b'ab c' * 500, dtype=np.uint8)\n"
        "hashes, counts = kernels.token_hashes(data, np.arange(0, len(data) + 1, dtype=np.int64))\n"
        "assert len(hashes) == 1500 and counts.sum() == 1500, (len(hashes), counts.sum())\n"
        "spaced = np.frombuffer(b'  a  bb ' * 300, dtype=np.uint8)\n"
        "hashes, counts = kernels.token_hashes(spaced, np.array([0, len(spaced)], dtype=np.int64))\n"
        "assert len(hashes) == 600 and list(counts) == [600]\n"
    )
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_tokens_of_every_length_at_every_alignment():
    """The scan reads a token 8 bytes at a time: tokens of 1 to 40 bytes starting at every byte of a word,
    separated by one to three spaces, in documents that end right after a token or after spaces, in a
    buffer aligned to 8 bytes and in one that is not; the tokens are those of ``split(" ")``, each hashed
    by hashlib's blake2b."""
    rng = random.Random(3)
    texts = []
    for length in range(1, 41):
        for shift in range(8):
            tokens = ["".join(rng.choice("ab9é") for _ in range(length)) for _ in range(rng.randrange(1, 5))]
            spaces = [" " * rng.randrange(1, 4) for _ in tokens]
            text = " " * shift + "".join(t + s for t, s in zip(tokens, spaces, strict=True))
            texts.append(text if rng.random() < 0.5 else text.rstrip(" "))
    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.cumsum([0] + [len(e) for e in encoded], dtype=np.int64)
    expected = [blake(token) for text in texts for token in text.split(" ") if token]
    for pad in (0, 3):
        data = np.frombuffer(b"x" * pad + b"".join(encoded), dtype=np.uint8)[pad:]
        hashes, counts = kernels.token_hashes(data, offsets)
        assert [int(h) for h in hashes] == expected
        assert list(counts) == [len([t for t in text.split(" ") if t]) for text in texts]


def test_many_distinct_tokens_and_long_shared_prefixes():
    """Enough distinct tokens to grow the token table several times; long tokens that agree on their
    first 16 bytes (told apart by the comparison of the rest)."""
    rng = random.Random(8)
    prefix = "p" * 16
    texts = [
        " ".join(
            f"{prefix}{rng.randrange(10**6)}" if rng.random() < 0.3 else f"w{rng.randrange(10**5)}"
            for _ in range(700)
        )
        for _ in range(60)
    ]
    params = fp.FingerprintParams.spec()
    prints, _ = kernel_fingerprints(texts, params)
    for text, printed in zip(texts, prints, strict=True):
        expected = python_fingerprint(text, params)
        assert printed["signature"] == expected["signature"]
        assert printed["shingle_count"] == len(expected["shingles"])


@given(
    st.lists(st.tuples(st.sets(st.integers(-(2**63), 2**63 - 1)), st.sets(st.integers(-4, 4))), max_size=20)
)
@settings(max_examples=200, deadline=None)
def test_shared_shingle_counts_equal_python_set_intersections(pairs):
    """The merge intersection (exact Jaccard's numerator on DuckDB) on sets stored as int_shingle_sets
    stores them: ascending as unsigned 64-bit, as signed BIGINT."""
    lefts, rights = [], []
    for left, right in pairs:
        right = right | set(list(left)[:3])  # some overlap with large values too
        lefts.append(sorted(left, key=lambda v: v % 2**64))
        rights.append(sorted(right, key=lambda v: v % 2**64))
    list_type = pa.list_(pa.int64())
    shared = fp.shared_shingle_counts(pa.array(lefts, list_type), pa.array(rights, list_type)).to_pylist()
    assert shared == [len(set(left) & set(right)) for left, right in zip(lefts, rights, strict=True)]


def test_shared_shingle_counts_on_sliced_chunked_and_null_sets():
    list_type = pa.list_(pa.int64())
    left = pa.chunked_array([pa.array([[1, 2], [3]], list_type), pa.array([None, [5, -1]], list_type)])
    right = pa.array([[0], [2], [3], [1], [5, 6, -1]], list_type).slice(1)
    assert fp.shared_shingle_counts(left, right).to_pylist() == [1, 1, 0, 2]


#: scored_pairs' signature_overlap as DuckDB's list expression (the macro's before the function replaced it):
#: the oracle of ``fp.signature_overlaps``
_OVERLAP_SQL = "coalesce(len(list_filter(list_zip(l, r), lambda p: p[1] = p[2])) / nullif(len(l), 0), 0.0)"

_signature = st.lists(st.integers(-(2**63), 2**63 - 1), min_size=6, max_size=6)


def _overlaps_in_duckdb(lefts, rights) -> tuple[list, list]:
    """(the list expression's values, webdedup_signature_overlap's) for the rows (lefts[i], rights[i])."""
    import duckdb

    from webdedup.engines.duckdb_plugin import register_functions

    connection = duckdb.connect()
    register_functions(connection)
    list_type = pa.list_(pa.int64())
    rows = pa.table({"l": pa.array(lefts, list_type), "r": pa.array(rights, list_type)})
    connection.register("signatures", rows)
    values = connection.sql(
        f"select {_OVERLAP_SQL}, webdedup_signature_overlap(l, r) from signatures"
    ).fetchall()
    return [row[0] for row in values], [row[1] for row in values]


@given(st.lists(st.tuples(_signature, _signature, st.sets(st.integers(0, 5))), max_size=30))
@settings(max_examples=100, deadline=None)
def test_signature_overlaps_equal_the_list_expression_on_signatures_of_one_length(rows):
    """The pipeline's signatures (one length, no nulls) take the numpy comparison: each row's share of
    agreeing positions is the list expression's, to the bit."""
    lefts = [left for left, _, _ in rows]
    rights = [[left[i] if i in same else right[i] for i in range(6)] for left, right, same in rows]
    expected, computed = _overlaps_in_duckdb(lefts, rights)
    assert computed == expected
    assert expected == [
        sum(a == b for a, b in zip(left, right, strict=True)) / 6
        for left, right in zip(lefts, rights, strict=True)
    ]


def test_signature_overlaps_of_nulls_empty_and_unequal_lists_equal_the_list_expression():
    lefts = [[1, 2, 3], None, [1, 2], [], [1, None, 3], [4, 5], [7, 8, 9], [1]]
    rights = [[1, 2, 4], [1, 2], None, [], [1, None, 3], [4, 5, 6], [7, 8], [2]]
    expected, computed = _overlaps_in_duckdb(lefts, rights)
    assert computed == expected == [2 / 3, 0.0, 0.0, 0.0, 2 / 3, 1.0, 2 / 3, 0.0]
    list_type = pa.list_(pa.int64())
    sliced = fp.signature_overlaps(
        pa.chunked_array([pa.array([[9, 9], [1, 2]], list_type), pa.array([[3, 4]], list_type)]),
        pa.array([[0, 0], [1, 0], [1, 2], [3, 0]], list_type).slice(1),
    )
    assert sliced.to_pylist() == [0.0, 1.0, 0.5]  # chunked and sliced columns, the numpy path
