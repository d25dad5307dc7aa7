"""The per-code-point table behind the compiled normalization (webdedup/core/normalize.py, utf8_kernel.py).

``map_char(c)`` is the spec's ``normalize_text`` applied to one character before whitespace collapsing;
``TABLE`` holds, per code point, its output bytes, flags and final-sigma context classes, filled lazily
(under a lock) from ``map_char``.  Why this is exact: normalize.py's docstring.
"""

from __future__ import annotations

import threading
import unicodedata

import numpy as np

MAX_CP = 0x110000
MAX_OUT = 12  # bytes of map_char output for one code point (at most 3 characters of 4 bytes)
SPACE = 0x20
CAPITAL_SIGMA = 0x03A3
FINAL_SIGMA_LAST_BYTE = 0x82  # "ς" is CF 82, "σ" (map_char of a capital sigma) is CF 83
SIGMA_SCAN_LIMIT = 32

# Per code point flags.
SIGMA = 2  # the capital sigma: lowercases to σ or ς depending on its neighbours
NEEDS_REFERENCE = 4  # another character whose T() holds a capital sigma (Unicode has none)
UNKNOWN = 0x80  # not filled yet

# Final-sigma context classes (bits 0-1: last relevant character of T(c); bits 2-3: first one).
IGNORABLE, CASED, OTHER = 0, 1, 2


def map_char(ch: str) -> str:
    """The spec's normalize_text applied to one character, before whitespace collapsing."""
    text = unicodedata.normalize("NFD", ch)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    # [^\w\s]+ -> " " and "_" -> " ": Python's Unicode \w is str.isalnum() or "_", \s is str.isspace().
    return "".join(c if c.isalnum() else " " for c in text)


def _sigma_class(x: str) -> int:
    """Case-ignorable / cased / other, as CPython's final-sigma rule sees the character ``x``."""
    if (x + "\u03a3").lower()[-1] == "\u03c2":
        return CASED  # cased and not case-ignorable
    return IGNORABLE if ("A" + x + "\u03a3").lower()[-1] == "\u03c2" else OTHER


def _sigma_context(ch: str) -> int:
    stripped = "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
    relevant = [k for k in map(_sigma_class, stripped) if k != IGNORABLE]
    return (relevant[-1] | relevant[0] << 2) if relevant else IGNORABLE


class Table:
    """Per-code-point arrays, filled lazily (numpy zeros are calloc'ed: untouched pages cost nothing)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.flags = np.full(MAX_CP, UNKNOWN, dtype=np.uint8)
        self.context = np.zeros(MAX_CP, dtype=np.uint8)  # final-sigma classes
        self.out = np.zeros((MAX_CP, MAX_OUT), dtype=np.uint8)  # the exact output bytes
        self.out_len = np.zeros(MAX_CP, dtype=np.int64)
        self.fill(np.arange(128))  # ASCII is mapped arithmetically, but the sigma scan reads its classes

    def fill(self, codepoints: np.ndarray) -> None:
        """Fill the entries of those of ``codepoints`` never seen before."""
        with self._lock:
            for cp in codepoints[(self.flags[codepoints] & UNKNOWN) != 0].tolist():
                ch = chr(cp)
                encoded = map_char(ch).encode("utf-8")
                n = len(encoded)
                if n > MAX_OUT:  # pragma: no cover - cannot happen with Unicode's current data
                    raise AssertionError(f"map_char({cp:#x}) is {n} bytes long")
                flags = 0
                if cp == CAPITAL_SIGMA:
                    flags |= SIGMA
                elif "\u03a3" in unicodedata.normalize("NFD", ch):  # pragma: no cover - none in Unicode
                    flags |= NEEDS_REFERENCE
                self.out[cp, :n] = np.frombuffer(encoded, dtype=np.uint8)
                self.out_len[cp] = n
                self.context[cp] = _sigma_context(ch)
                self.flags[cp] = flags  # last: readers that see it see complete entries


TABLE = Table()
