"""BLAKE2b with an 8-byte digest, unkeyed, as a compiled kernel (numba): the token hash of
webdedup/core/kernels.py, written out so that a batch's tokens are hashed without a Python call each
(``blake2b_words`` for a token of at most 16 bytes, held as two words; ``blake2b_64`` for any bytes).
``tests/python/unit/test_kernels.py`` checks it against hashlib's blake2b(digest_size=8).
"""

from __future__ import annotations

import numpy as np
from numba import njit

U64 = np.uint64
MASK64 = U64(0xFFFFFFFFFFFFFFFF)

_IV0, _IV1, _IV2, _IV3, _IV4, _IV5, _IV6, _IV7 = (
    U64(0x6A09E667F3BCC908),
    U64(0xBB67AE8584CAA73B),
    U64(0x3C6EF372FE94F82B),
    U64(0xA54FF53A5F1D36F1),
    U64(0x510E527FADE682D1),
    U64(0x9B05688C2B3E6C1F),
    U64(0x1F83D9ABFB41BD6B),
    U64(0x5BE0CD19137E2179),
)
# parameter block word 0 for an unkeyed 8-byte digest: digest_length=8, key_length=0, fanout=1, depth=1
_PARAM0 = U64(0x01010008)
#: the chained state before the first block: the IV with the parameter block mixed in
_H0 = (_IV0 ^ _PARAM0, _IV1, _IV2, _IV3, _IV4, _IV5, _IV6, _IV7)


@njit(cache=True, nogil=True)
def _rotr(x, n):
    return (x >> n) | (x << (U64(64) - n))


@njit(cache=True, nogil=True)
def _mix(a, b, c, d, x, y):
    """BLAKE2b's G function on four state words (returned) with message words x and y."""
    a = a + b + x
    d = _rotr(d ^ a, U64(32))
    c = c + d
    b = _rotr(b ^ c, U64(24))
    a = a + b + y
    d = _rotr(d ^ a, U64(16))
    c = c + d
    b = _rotr(b ^ c, U64(63))
    return a, b, c, d


@njit(cache=True, nogil=True)
def _round(v, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15):
    """One round on the state ``v`` (a tuple of 16 words, returned): the column then the diagonal steps,
    with the message words in the round's order (the x here are the words sigma[r] picks)."""
    v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = v
    v0, v4, v8, v12 = _mix(v0, v4, v8, v12, x0, x1)
    v1, v5, v9, v13 = _mix(v1, v5, v9, v13, x2, x3)
    v2, v6, v10, v14 = _mix(v2, v6, v10, v14, x4, x5)
    v3, v7, v11, v15 = _mix(v3, v7, v11, v15, x6, x7)
    v0, v5, v10, v15 = _mix(v0, v5, v10, v15, x8, x9)
    v1, v6, v11, v12 = _mix(v1, v6, v11, v12, x10, x11)
    v2, v7, v8, v13 = _mix(v2, v7, v8, v13, x12, x13)
    v3, v4, v9, v14 = _mix(v3, v4, v9, v14, x14, x15)
    return v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15


@njit(cache=True, nogil=True)
def _compress(h, m, t, last):
    """BLAKE2b's compression function F: the chained state ``h`` (8 words) after one 128-byte block of
    message words ``m`` (16 little-endian words), ``t`` bytes hashed so far, ``last`` for the final block.

    Tuples, not arrays, and the twelve rounds written out with their message words in the order the
    spec's sigma permutations pick them (rounds 10 and 11 repeat rows 0 and 1, as the spec does), so that
    the state stays in registers: 126 ns a short token against 265 ns with loops over arrays
    (docs/benchmarks.md, session 39).  ``tests/python/unit/test_kernels.py`` checks it against hashlib.
    """
    m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15 = m
    final = MASK64 if last else U64(0)
    v = (
        h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
        _IV0, _IV1, _IV2, _IV3, _IV4 ^ t, _IV5, _IV6 ^ final, _IV7,
    )  # fmt: skip
    # the message schedule: sigma rows 0-9, then rows 0 and 1 again
    v = _round(v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
    v = _round(v, m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)
    v = _round(v, m11, m8, m12, m0, m5, m2, m15, m13, m10, m14, m3, m6, m7, m1, m9, m4)
    v = _round(v, m7, m9, m3, m1, m13, m12, m11, m14, m2, m6, m5, m10, m4, m0, m15, m8)
    v = _round(v, m9, m0, m5, m7, m2, m4, m10, m15, m14, m1, m11, m12, m6, m8, m3, m13)
    v = _round(v, m2, m12, m6, m10, m0, m11, m8, m3, m4, m13, m7, m5, m15, m14, m1, m9)
    v = _round(v, m12, m5, m1, m15, m14, m13, m4, m10, m0, m7, m6, m3, m9, m2, m8, m11)
    v = _round(v, m13, m11, m7, m14, m12, m1, m3, m9, m5, m0, m15, m4, m8, m6, m2, m10)
    v = _round(v, m6, m15, m14, m9, m11, m3, m0, m8, m12, m2, m13, m7, m1, m4, m10, m5)
    v = _round(v, m10, m2, m8, m4, m7, m6, m1, m5, m15, m11, m9, m14, m3, m12, m13, m0)
    v = _round(v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
    v = _round(v, m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)
    return (
        h[0] ^ v[0] ^ v[8], h[1] ^ v[1] ^ v[9], h[2] ^ v[2] ^ v[10], h[3] ^ v[3] ^ v[11],
        h[4] ^ v[4] ^ v[12], h[5] ^ v[5] ^ v[13], h[6] ^ v[6] ^ v[14], h[7] ^ v[7] ^ v[15],
    )  # fmt: skip


@njit(cache=True, nogil=True)
def blake2b_words(head, tail, length):
    """``blake2b_64`` of a text of at most 16 bytes given as its two little-endian words (``head``: bytes
    0-7, ``tail``: bytes 8-15, zero past ``length``), as the token scan of webdedup/core/kernels.py holds
    a token: one block, no bytes read again."""
    zero = U64(0)
    m = (head, tail, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero)
    return _compress(_H0, m, U64(length), True)[0]


@njit(cache=True, nogil=True)
def _word(data, position, end):
    """Bytes ``position`` .. ``position + 7`` of ``data`` as a little-endian word, those from ``end`` on 0."""
    word = U64(0)
    for i in range(max(min(end - position, 8), 0)):
        word |= U64(data[position + i]) << U64(8 * i)
    return word


@njit(cache=True, nogil=True)
def blake2b_64(data, start, length):
    """``int.from_bytes(hashlib.blake2b(data[start:start + length], digest_size=8).digest(), "little")``."""
    h = _H0
    end = start + length
    done = 0
    while True:
        p = start + done
        m = (
            _word(data, p, end),
            _word(data, p + 8, end),
            _word(data, p + 16, end),
            _word(data, p + 24, end),
            _word(data, p + 32, end),
            _word(data, p + 40, end),
            _word(data, p + 48, end),
            _word(data, p + 56, end),
            _word(data, p + 64, end),
            _word(data, p + 72, end),
            _word(data, p + 80, end),
            _word(data, p + 88, end),
            _word(data, p + 96, end),
            _word(data, p + 104, end),
            _word(data, p + 112, end),
            _word(data, p + 120, end),
        )
        done = min(done + 128, length)
        h = _compress(h, m, U64(done), done == length)
        if done == length:
            return h[0]
