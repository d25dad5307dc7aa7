"""The fast normalization and shingling equal the spec's reference functions exactly, Unicode included."""

import sys
import unicodedata

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webdedup import fingerprint as fp
from webdedup import reference as ref

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


def test_every_code_point_maps_like_the_spec():
    """Single characters cover the per-character table for all of Unicode (surrogates excluded)."""
    mismatches = []
    for codepoint in range(sys.maxunicode + 1):
        if 0xD800 <= codepoint <= 0xDFFF:
            continue
        ch = chr(codepoint)
        for sample in (ch, "a" + ch + "b"):
            if fp.normalize_text(sample) != ref.normalize_text(sample):
                mismatches.append(hex(codepoint))
                break
    assert mismatches == []


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
