"""The normalization of text with non-ASCII characters as one compiled pass (numba) per batch.

``normalize_utf8`` writes, per document, the concatenation of ``map_char(c)`` over its characters with
runs of spaces collapsed and the ends trimmed, a capital sigma lowercased by CPython's final-sigma rule:
exactly ``reference.normalize_text`` (why: webdedup/core/normalize.py's docstring).  ASCII bytes are
mapped by a table; every other character is decoded and replaced by its exact output bytes from the
per-code-point table (webdedup/core/charmap.py), however many bytes they take (Hangul syllables become
two or three jamo).  Documents it cannot finish alone are marked in ``special`` for the reference
function: a character flagged NEEDS_REFERENCE, or a capital sigma whose neighbourhood scan passes more
than SIGMA_SCAN_LIMIT case-ignorable characters.  At code points the table does not hold yet the pass
stops for the caller to fill them and go on.  The input must be valid UTF-8 (the caller validates it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from webdedup.core.charmap import (
    CASED,
    FINAL_SIGMA_LAST_BYTE,
    NEEDS_REFERENCE,
    OTHER,
    SIGMA,
    SIGMA_SCAN_LIMIT,
    SPACE,
    UNKNOWN,
)

# map_char of every ASCII byte: letters lowercased, digits kept, everything else a space
_ASCII = np.array(
    [c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or 48 <= c <= 57 else SPACE for c in range(128)],
    dtype=np.uint8,
)


@njit(cache=True, nogil=True, inline="always")
def _decode(data, p):
    """The code point and UTF-8 length of the character whose first byte is ``data[p]``."""
    c = data[p]
    if c < 0x80:
        return np.int64(c), 1
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
    return cp, size


@njit(cache=True, nogil=True)
def _final_sigma(data, context, start, lead, after, end):
    """1 if the capital sigma at ``data[lead:after]`` of the document ``data[start:end]`` lowercases to a
    final sigma, 0 if not, -1 when a scan passed SIGMA_SCAN_LIMIT case-ignorable characters.  CPython:
    final exactly when the nearest character before it that is not case-ignorable exists and is cased,
    and the nearest one after it does not exist or is not cased; ``context`` holds, per code point, the
    class of the last (bits 0-1) and first (bits 2-3) such character of its T() (normalize.py)."""
    q = lead
    cased = False
    for _ in range(SIGMA_SCAN_LIMIT):
        if q == start:
            return 0
        q -= 1
        while data[q] & 0xC0 == 0x80:  # back over continuation bytes to the character's first byte
            q -= 1
        kind = context[_decode(data, q)[0]] & 3
        if kind == OTHER:
            return 0
        if kind == CASED:
            cased = True
            break
    if not cased:
        return -1
    q = after
    for _ in range(SIGMA_SCAN_LIMIT):
        if q >= end:
            return 1
        cp, size = _decode(data, q)
        kind = context[cp] >> 2
        if kind == OTHER:
            return 1
        if kind == CASED:
            return 0
        q += size
    return -1


@njit(cache=True, nogil=True)
def normalize_utf8(
    data, offsets, flags, context, table_out, table_len, out, out_offsets, special, unknown, first
):
    """Normalize documents ``first`` onwards of ``data[offsets[d]:offsets[d + 1]]`` into ``out`` (bounds in
    ``out_offsets``; ``out_offsets[first]`` must be set).

    Returns ``(0, n_docs)`` when done.  Else it stops before a document it could not finish, ``(status,
    d)``: -1 when ``out`` is too small (``6 * len(data) + 16`` bytes always do: no character maps to more
    than six times its own length), or the number of code points of document ``d`` whose table entries
    are missing (the first ``len(unknown)`` of them, with repeats, in ``unknown``): fill them, then go on
    from ``d``.  A document marked in ``special`` has an empty output.
    """
    # Every mapped byte is written; the write position advances unless it is a space after a space (a
    # document starts as if after one), and a document's trailing space is taken back at its end.
    limit = len(out) - 16
    n_docs = len(offsets) - 1
    for d in range(first, n_docs):
        o = out_offsets[d]
        after_space = np.int64(1)
        missing = 0
        special[d] = False
        start = offsets[d]
        p = start
        end = offsets[d + 1]
        while p < end:
            if o > limit:
                return -1, d
            c = data[p]
            if c < 0x80:
                b = _ASCII[c]
                out[o] = b
                space = np.int64(b == SPACE)
                o += 1 - (space & after_space)
                after_space = space
                p += 1
                continue
            cp, size = _decode(data, p)
            f = flags[cp]
            if f & UNKNOWN:
                if missing < len(unknown):
                    unknown[missing] = cp
                missing += 1
                p += size
                continue
            final = 0
            if f & SIGMA:
                final = _final_sigma(data, context, start, p, p + size, end)
            if f & NEEDS_REFERENCE or final < 0:
                special[d] = True
                break
            p += size
            for j in range(table_len[cp]):
                b = table_out[cp, j]
                out[o] = b
                space = np.int64(b == SPACE)
                o += 1 - (space & after_space)
                after_space = space
            if final:
                out[o - 1] = FINAL_SIGMA_LAST_BYTE  # "σ" (CF 83) written, "ς" (CF 82) meant
        if missing:
            return missing, d
        if special[d]:
            o = out_offsets[d]
        elif after_space and o > out_offsets[d]:
            o -= 1
        out_offsets[d + 1] = o
    return 0, n_docs
