"""BLAKE2b with an 8-byte digest, unkeyed, as a compiled kernel (numba): the token hash of
webdedup/core/kernels.py, written out so that a batch's tokens are hashed without a Python call each.
``tests/python/unit/test_kernels.py`` checks it against hashlib's blake2b(digest_size=8).
"""

from __future__ import annotations

import numpy as np
from numba import njit

U64 = np.uint64
MASK64 = U64(0xFFFFFFFFFFFFFFFF)

_BLAKE2B_IV = np.array(
    [
        0x6A09E667F3BCC908,
        0xBB67AE8584CAA73B,
        0x3C6EF372FE94F82B,
        0xA54FF53A5F1D36F1,
        0x510E527FADE682D1,
        0x9B05688C2B3E6C1F,
        0x1F83D9ABFB41BD6B,
        0x5BE0CD19137E2179,
    ],
    dtype=U64,
)
_BLAKE2B_SIGMA = np.array(
    [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ],
    dtype=np.int64,
)
# parameter block word 0 for an unkeyed 8-byte digest: digest_length=8, key_length=0, fanout=1, depth=1
_BLAKE2B_PARAM0 = U64(0x01010008)


@njit(cache=True, nogil=True, inline="always")
def _rotr(x, n):
    return (x >> n) | (x << (U64(64) - n))


@njit(cache=True, nogil=True, inline="always")
def _mix(v, a, b, c, d, x, y):
    v[a] = v[a] + v[b] + x
    v[d] = _rotr(v[d] ^ v[a], U64(32))
    v[c] = v[c] + v[d]
    v[b] = _rotr(v[b] ^ v[c], U64(24))
    v[a] = v[a] + v[b] + y
    v[d] = _rotr(v[d] ^ v[a], U64(16))
    v[c] = v[c] + v[d]
    v[b] = _rotr(v[b] ^ v[c], U64(63))


@njit(cache=True, nogil=True)
def _compress(h, block, v, t, last):
    """BLAKE2b's compression function F on one 128-byte block (16 little-endian words)."""
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = _BLAKE2B_IV[i]
    v[12] ^= t
    if last:
        v[14] ^= MASK64
    for r in range(12):
        s = _BLAKE2B_SIGMA[r % 10]
        _mix(v, 0, 4, 8, 12, block[s[0]], block[s[1]])
        _mix(v, 1, 5, 9, 13, block[s[2]], block[s[3]])
        _mix(v, 2, 6, 10, 14, block[s[4]], block[s[5]])
        _mix(v, 3, 7, 11, 15, block[s[6]], block[s[7]])
        _mix(v, 0, 5, 10, 15, block[s[8]], block[s[9]])
        _mix(v, 1, 6, 11, 12, block[s[10]], block[s[11]])
        _mix(v, 2, 7, 8, 13, block[s[12]], block[s[13]])
        _mix(v, 3, 4, 9, 14, block[s[14]], block[s[15]])
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


@njit(cache=True, nogil=True)
def blake2b_64(data, start, length, h, block, v):
    """``int.from_bytes(hashlib.blake2b(data[start:start + length], digest_size=8).digest(), "little")``.

    ``h`` (8), ``block`` (16) and ``v`` (16) are uint64 scratch arrays supplied by the caller.
    """
    for i in range(8):
        h[i] = _BLAKE2B_IV[i]
    h[0] ^= _BLAKE2B_PARAM0
    done = 0
    while True:
        remaining = length - done
        take = min(remaining, 128)
        for i in range(16):
            block[i] = U64(0)
        for i in range(take):
            block[i >> 3] |= U64(data[start + done + i]) << U64((i & 7) * 8)
        done += take
        last = done >= length
        _compress(h, block, v, U64(done), last)
        if last:
            return h[0]
