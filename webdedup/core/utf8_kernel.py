"""The normalization of text with non-ASCII characters as one compiled pass (numba) per batch.

``normalize_utf8`` writes, per document, the concatenation of ``map_char(c)`` over its characters with
runs of spaces collapsed and the ends trimmed: exactly ``reference.normalize_text`` for every document
without a capital sigma (why: webdedup/core/normalize.py's docstring).  ASCII bytes are mapped
arithmetically; every other character is decoded and replaced by its exact output bytes from the
per-code-point table (webdedup/core/charmap.py), however many bytes they take (Hangul syllables become
two or three jamo).  Documents with a character the pass cannot map alone (the capital sigma, whose
lowercase depends on its neighbours, or a character flagged for the reference function) are marked in
``special`` for the caller; at code points the table does not hold yet the pass stops for the caller
to fill them and go on.  The input must be valid UTF-8 (the caller validates it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_SPACE = 32
_UNKNOWN = 0x80  # charmap.UNKNOWN
_HANDLED_ELSEWHERE = 2 | 4  # charmap.SIGMA | charmap.NEEDS_REFERENCE
# map_char of every ASCII byte: letters lowercased, digits kept, everything else a space
_ASCII = np.array(
    [c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or 48 <= c <= 57 else _SPACE for c in range(128)],
    dtype=np.uint8,
)


@njit(cache=True, nogil=True)
def normalize_utf8(data, offsets, flags, table_out, table_len, out, out_offsets, special, unknown, first):
    """Normalize documents ``first`` onwards of ``data[offsets[d]:offsets[d + 1]]`` into ``out`` (bounds in
    ``out_offsets``; ``out_offsets[first]`` must be set).

    Returns ``(0, n_docs)`` when done.  Else it stops before a document it could not finish, ``(status,
    d)``: -1 when ``out`` is too small (``6 * len(data) + 16`` bytes always do: no character maps to more
    than six times its own length), or the number of code points of document ``d`` whose table entries
    are missing (the first ``len(unknown)`` of them, with repeats, in ``unknown``): fill them, then go on
    from ``d``.
    """
    # Every mapped byte is written; the write position advances unless it is a space after a space (a
    # document starts as if after one), and a document's trailing space is taken back at its end.
    limit = len(out) - 16
    n_docs = len(offsets) - 1
    for d in range(first, n_docs):
        o = out_offsets[d]
        after_space = np.int64(1)
        missing = 0
        p = offsets[d]
        end = offsets[d + 1]
        while p < end:
            if o > limit:
                return -1, d
            c = data[p]
            if c < 0x80:
                b = _ASCII[c]
                out[o] = b
                space = np.int64(b == _SPACE)
                o += 1 - (space & after_space)
                after_space = space
                p += 1
                continue
            # a lead byte: the sequence's length and code point
            if c >= 0xF0:
                size = 4
                cp = np.int64(c & 0x07)
            elif c >= 0xE0:
                size = 3
                cp = np.int64(c & 0x0F)
            else:
                size = 2
                cp = np.int64(c & 0x1F)
            for j in range(1, size):
                cp = (cp << 6) | np.int64(data[p + j] & 0x3F)
            p += size
            f = flags[cp]
            if f & _UNKNOWN:
                if missing < len(unknown):
                    unknown[missing] = cp
                missing += 1
                continue
            if f & _HANDLED_ELSEWHERE:
                special[d] = True
                continue
            for j in range(table_len[cp]):
                b = table_out[cp, j]
                out[o] = b
                space = np.int64(b == _SPACE)
                o += 1 - (space & after_space)
                after_space = space
        if missing:
            return missing, d
        if after_space and o > out_offsets[d]:
            o -= 1
        out_offsets[d + 1] = o
    return 0, n_docs
