"""Normalization on every Unicode code point, alone and in contexts, against the spec's function.

Exhaustive and slow (about a minute): not a unit test; `make test` runs it with the others.
"""

import sys

import pyarrow as pa
import pytest

from webdedup.core import fingerprint as fp
from webdedup.core import reference as ref
from webdedup.core.normalize import normalize_array


def _all_code_points():
    return [cp for cp in range(sys.maxunicode + 1) if not 0xD800 <= cp <= 0xDFFF]


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
    "template",
    [
        "{0}",
        "a{0}b",
        "Ab {0}",
        "{0}{0}",
        " {0}x",
        # Final sigma: the character before and after a capital sigma, directly and behind a cased letter.
        "A{0}Σ AΣ{0} {0}Σ AΣ{0}b Σ{0}Σ ΣΣ{0}",
    ],
)
def test_every_code_point_in_batches_like_the_spec(template):
    """Every code point, alone and in contexts, in big batches (the batch path's tables)."""
    codepoints = _all_code_points()
    for begin in range(0, len(codepoints), 1 << 18):
        values = [template.format(chr(cp)) for cp in codepoints[begin : begin + (1 << 18)]]
        result = normalize_array(pa.array(values, type=pa.large_string())).to_pylist()
        expected = [ref.normalize_text(v) for v in values]
        mismatches = [ascii(v) for v, r, e in zip(values, result, expected, strict=True) if r != e]
        assert mismatches == []
