"""Text read 8 bytes at a time: the word-at-a-time helpers of the token scan (webdedup/core/kernels.py).

A token is a run of bytes other than a space; reading its bytes one at a time cost more than hashing
it.  Here a text buffer is read as aligned 8-byte words (``text_words``), the 8 bytes at any position
are two of them shifted (``bytes_at``), and the bytes before the first space of such a word are found
with exact bit arithmetic, no loop (``token_bytes``).  Bytes are little-endian: byte ``i`` of a word is
bits ``8i .. 8i + 7``, as the token scan has always packed a token's first 16 bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

U64 = np.uint64
MASK64 = U64(0xFFFFFFFFFFFFFFFF)
_SPACES = U64(0x2020202020202020)
_LOW7 = U64(0x7F7F7F7F7F7F7F7F)
_BYTE_RANK = U64(0x0102030405060708)


@njit(cache=True, nogil=True, inline="always")
def bytes_at(low, high, p):
    """Bytes ``p .. p + 7`` of a text buffer as a little-endian uint64 (byte ``i`` in bits ``8i .. 8i + 7``),
    from its aligned 8-byte words ``low`` (holding byte ``p``) and ``high`` (the next one)."""
    r = U64((p & 7) * 8)
    return (low >> r) | ((high << U64(1)) << (U64(63) - r))


@njit(cache=True, nogil=True, inline="always")
def token_bytes(word):
    """How many bytes of ``word`` come before its first space byte (8 when it has none)."""
    x = word ^ _SPACES
    spaces = ~(((x & _LOW7) + _LOW7) | x | _LOW7)  # 0x80 in each space byte, 0 elsewhere (exact: no carries)
    if spaces == U64(0):
        return 8
    lowest = spaces & (~spaces + U64(1))  # 0x80 << 8k for the first space byte k
    return np.int64(((lowest >> U64(7)) * _BYTE_RANK) >> U64(56)) - 1


@njit(cache=True, nogil=True, inline="always")
def low_bytes(count):
    """A mask of the ``count`` (0 .. 8) low bytes of a uint64."""
    if count >= 8:
        return MASK64
    return (U64(1) << U64(8 * count)) - U64(1)


def text_words(data):
    """``data`` (uint8) as its whole 8-byte words (a view when ``data`` is 8-byte aligned, as Arrow buffers
    are) and a copy of the rest padded with 16 zero bytes, so that a word-at-a-time scan never reads past
    it (``webdedup.core.kernels``' token scan)."""
    if data.ctypes.data % 8:
        aligned = np.empty(len(data) // 8 + 1, dtype=U64).view(np.uint8)[: len(data)]
        aligned[:] = data
        data = aligned
    whole = len(data) // 8
    last = np.zeros(3, dtype=U64)
    last.view(np.uint8)[: len(data) - 8 * whole] = data[8 * whole :]
    return data[: 8 * whole].view(U64), last
