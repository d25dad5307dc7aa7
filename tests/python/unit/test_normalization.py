"""The fast normalization and shingling equal the spec's reference functions exactly, Unicode included."""

import random
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webdedup.core import charmap, normalize
from webdedup.core import fingerprint as fp
from webdedup.core import reference as ref
from webdedup.core.normalize import normalize_array

# Characters that exercise every branch: accents, CJK, Cyrillic, Arabic, Greek (final sigma), Devanagari
# (spacing marks are not \w), underscores, NBSP and other Unicode spaces, punctuation, digits, ligatures.
TRICKY = (
    "aéÉeÀçÇñÑüßẞİıǅǄﬁＡ１２"
    "東京都漢字かなカナ한국어"
    "ПриветМИРёЁ"
    "مرحباالعالم٣"
    "ΣΟΦΟΣσοφόςΌΣΑΣΣ"
    "हिन्दीकि"
    "_-–—.,;:!?¡¿'\"«»()[]{}@#$%^&*+=/\\|~`"
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u00a0\u1680\u2000\u2003\u2007\u200b\u2028\u2029\u202f\u205f\u3000"
    "0123456789½²①"
    "\u0301\u0308\u0327\u200d\ufeff\x00"
)
texts = st.text(alphabet=st.sampled_from(TRICKY) | st.characters(codec="utf-8"), max_size=200)


@given(texts)
@settings(max_examples=600, deadline=None)
def test_normalize_text_equals_reference(value):
    assert fp.normalize_text(value) == ref.normalize_text(value)


@given(st.lists(texts, min_size=1, max_size=12))
@settings(max_examples=200, deadline=None)
def test_normalize_batch_equals_reference(values):
    normalized = fp.normalize_batch(pa.array(values)).to_pylist()
    assert normalized == [ref.normalize_text(v) for v in values]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Café  RÉSUMÉ_draft!!", "cafe resume draft"),
        ("ΟΔΟΣ ΣΟΦΟΣ", "οδος σοφος"),  # final sigma comes from str.lower's context rule
        ("東京 都\u3000漢字", "東京 都 漢字"),
        ("a\u00a0b\u2003c", "a b c"),
        ("", ""),
        (None, ""),
        ("...!!!", ""),
    ],
)
def test_known_normalizations(value, expected):
    assert ref.normalize_text(value) == expected
    assert fp.normalize_text(value) == expected
    assert fp.normalize_batch(pa.array([value], pa.string())).to_pylist() == [expected]


shingle_texts = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "délta", "ε", "東", "x_y", "z!"]), max_size=14
).map(" ".join)


@given(st.lists(shingle_texts, min_size=1, max_size=8), st.integers(min_value=1, max_value=6))
@settings(max_examples=300, deadline=None)
def test_shingle_counts_and_jaccard_equal_reference(values, size):
    normalized = fp.normalize_batch(pa.array(values))
    shingled = fp.shingle_batch(normalized, size)
    reference_sets = [ref.token_shingles(ref.normalize_text(v).split(), size=size) for v in values]
    assert shingled.shingle_counts.tolist() == [len(s) for s in reference_sets]
    assert shingled.token_counts.tolist() == [len(ref.normalize_text(v).split()) for v in values]
    hash_sets = [set(shingled.hashes[shingled.doc_index == i].tolist()) for i in range(len(values))]
    for i in range(len(values)):
        for j in range(len(values)):
            assert ref.jaccard(hash_sets[i], hash_sets[j]) == ref.jaccard(
                reference_sets[i], reference_sets[j]
            )


def test_unicode_database_is_the_one_python_uses():
    # The per-character table is built from this interpreter's unicodedata, like the reference function.
    assert unicodedata.unidata_version


# --------------------------------------------------------------------------------------------------
# The vectorized batch path (webdedup.core.normalize.normalize_array) used by normalize_batch


def _ranges(*bounds):
    return st.one_of(*(st.characters(min_codepoint=lo, max_codepoint=hi, codec="utf-8") for lo, hi in bounds))


# Scripts and character classes that take different paths: combining marks (deleted bytes), Hangul
# syllables (outputs longer than the input), CJK, Greek with capital sigma (final-sigma rule),
# Devanagari (combining virama, spacing marks), Unicode spaces and controls, emoji (4-byte sequences).
unicode_chars = (
    st.sampled_from(TRICKY)
    | st.characters(codec="utf-8")
    | _ranges(
        (0x0300, 0x036F),
        (0xAC00, 0xD7A3),
        (0x1100, 0x11FF),
        (0x4E00, 0x9FFF),
        (0x0370, 0x03FF),
        (0x0900, 0x097F),
        (0x0000, 0x00A0),
        (0x2000, 0x206F),
        (0x1F300, 0x1FAFF),
        (0x0F00, 0x0FFF),
    )
)
unicode_texts = st.text(alphabet=unicode_chars, max_size=60)
ascii_texts = st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=60)


def _expected(arr):
    values = arr.to_pylist() if isinstance(arr, pa.Array | pa.ChunkedArray) else arr
    return [ref.normalize_text(v) for v in values]


def _check(arr):
    result = normalize_array(arr)
    assert result.type == pa.large_string()
    result.validate(full=True)
    assert result.null_count == 0
    expected = _expected(arr)
    assert result.to_pylist() == expected
    # tokens_only (what shingling reads) may keep extra spaces, never other tokens
    tokens = normalize_array(arr, tokens_only=True)
    tokens.validate(full=True)
    assert [_tokens(text) for text in tokens.to_pylist()] == [_tokens(text) for text in expected]


def _tokens(text):
    return [token for token in text.split(" ") if token]


@given(
    st.lists(st.none() | unicode_texts, max_size=16),
    st.sampled_from([pa.string(), pa.large_string()]),
    st.integers(min_value=0, max_value=4),
    st.integers(min_value=0, max_value=16),
)
@settings(max_examples=400, deadline=None)
def test_normalize_array_equals_reference_on_random_unicode(values, arrow_type, start, length):
    arr = pa.array(values, type=arrow_type)
    _check(arr)
    _check(arr.slice(start, length))
    assert fp.normalize_batch(arr).to_pylist() == _expected(arr)


@given(st.lists(st.lists(unicode_texts | st.none(), max_size=5), min_size=1, max_size=4))
@settings(max_examples=100, deadline=None)
def test_normalize_array_accepts_chunked_arrays(chunks):
    _check(pa.chunked_array([pa.array(chunk, type=pa.string()) for chunk in chunks]))


@given(st.lists(ascii_texts, max_size=30))
@settings(max_examples=200, deadline=None)
def test_normalize_array_on_ascii_batches(values):
    _check(pa.array(values, type=pa.string()))


def test_normalize_array_on_edge_cases():
    arr = pa.array(["Ab, CD!", None, "Ωμέγα ΣΟΦΟΣ", "한국어 ǅ", "", "  e\u0301  "], type=pa.string())
    _check(arr)
    _check(arr.slice(1, 3))
    _check(arr.slice(6))
    _check(pa.array([], type=pa.string()))
    _check(pa.array([], type=pa.large_string()))
    _check(pa.array([None, None], type=pa.string()))
    _check(pa.array(["", "", ""], type=pa.large_string()))
    _check(pa.chunked_array([], type=pa.string()))
    _check(pa.array(["Ab", "Σα", "Ab"]).dictionary_encode())
    # Deleted bytes (whole combining marks, shortened characters) next to spaces and document ends.
    _check(pa.array([" \u0301a", "a \u0301", "\u0301 a", "a\u0301b", "é,é", "x \u0301\u0302 y", "\u0301"]))
    # Leading blank runs longer than the vectorized steps, and documents with no words at all.
    _check(pa.array([" " * 20 + "x", "!" * 30, "\u3000" * 12 + "y z" + " " * 9, "—" * 9]))


@pytest.mark.parametrize("filler", ["'", ".", "\u0301", "e\u0301", "'\u0301", ":"])
def test_final_sigma_across_runs_of_case_ignorable_characters(filler):
    """Scans over case-ignorable characters (and dropped combining marks), below and above the limit."""
    values = []
    for k in range(charmap.SIGMA_SCAN_LIMIT - 3, charmap.SIGMA_SCAN_LIMIT + 3):
        run = filler * k
        values += [f"A{run}Σ", f"AΣ{run}", f"AΣ{run}b", f"a{run}Σ{run}b", f"{run}Σ", f"Σ{run}Σ{run}x Σ"]
    _check(pa.array(values))
    _check(pa.array(values + ["한국어 ΣΑΣ"] * 3))  # rebuilt (expanding) documents with sigmas too


def test_normalize_array_mixes_all_paths_in_one_batch():
    """ASCII, accented, expanding (Hangul), sigma, reference-fallback and null documents keep their order."""
    docs = [
        "Plain ASCII, text!",
        "Café RÉSUMÉ",
        "한국어 텍스트",
        "ΟΔΟΣ ΣΟΦΟΣ",
        "ΣΟΦΟΣ한'" + "'" * 40 + "Σ",
        None,
        "‘quoted’ — ok",
        "",
    ] * 50
    rng = random.Random(5)
    rng.shuffle(docs)
    _check(pa.array(docs, type=pa.string()))
    _check(pa.array(docs, type=pa.large_string()).slice(7, 200))


def test_normalize_array_when_the_output_outgrows_the_input():
    """Hangul syllables decompose into two or three jamo: these batches normalize to two or three times
    their bytes, more than the compiled pass first makes room for."""
    _check(pa.array(["한국어 텍스트 " * 30, "각", "", None, "힣" * 100]))
    _check(pa.array(["값" * 1000]))


def test_normalize_array_on_a_realistic_batch():
    from pydoc_data.topics import topics

    words = " ".join(topics.values()).split()
    rng = random.Random(11)
    docs = []
    for _ in range(300):
        start = rng.randrange(len(words) - 200)
        doc = " ".join(words[start : start + rng.randint(0, 200)])
        docs.append(doc if rng.random() < 0.5 else doc.replace("e", "é").replace("o", "ö"))
    _check(pa.array(docs))
    _check(pa.array([d for d in docs if d.isascii()]))


def _all_code_points():
    return [cp for cp in range(sys.maxunicode + 1) if not 0xD800 <= cp <= 0xDFFF]


def test_table_fills_safely_from_two_threads(monkeypatch):
    """Two threads normalizing batches full of unseen code points get exact results from a fresh table."""
    monkeypatch.setattr(normalize, "TABLE", charmap.Table())
    rng = random.Random(2)
    codepoints = _all_code_points()
    batches = [
        pa.array(["".join(chr(rng.choice(codepoints)) for _ in range(50)) for _ in range(200)])
        for _ in range(8)
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(normalize_array, batches))
    for batch, result in zip(batches, results, strict=True):
        assert result.to_pylist() == _expected(batch)


def test_capital_sigmas_need_the_reference_only_past_the_scan_limit(monkeypatch):
    """The compiled pass lowercases capital sigmas itself; a document goes to the reference function only
    when a sigma's scan passes more than SIGMA_SCAN_LIMIT case-ignorable characters."""
    original = ref.normalize_text
    long_run = "A" + "'" * (charmap.SIGMA_SCAN_LIMIT + 1) + "Σ"
    values = ["ΟΔΟΣ ΣΟΦΟΣ", "Σ", "aΣ", "ΣΑΣ.", "Σ'a", "Ά'Σ'", long_run]
    expected = [original(value) for value in values]
    calls = []
    monkeypatch.setattr(
        normalize.reference, "normalize_text", lambda value: calls.append(value) or original(value)
    )
    assert normalize_array(pa.array(values)).to_pylist() == expected
    assert calls == [long_run]


def test_documents_with_flagged_characters_use_the_reference(monkeypatch):
    """The fallback for characters whose decomposition would hold a capital sigma (none in Unicode)."""
    table = charmap.Table()
    monkeypatch.setattr(normalize, "TABLE", table)
    table.fill(np.array([ord("é")]))
    table.flags[ord("é")] |= charmap.NEEDS_REFERENCE
    values = ["Café au lait", "plain", "é한국", "ΣΑΣ é", None]
    expected = _expected(values)
    calls = []
    original = ref.normalize_text

    def counting_reference(value):
        calls.append(value)
        return original(value)

    monkeypatch.setattr(normalize.reference, "normalize_text", counting_reference)
    assert normalize_array(pa.array(values)).to_pylist() == expected
    assert calls == ["Café au lait", "é한국", "ΣΑΣ é"]
