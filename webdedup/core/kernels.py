"""Compiled kernels (numba) for the per-document hot loops: tokens, shingle hashes, MinHash.

The arithmetic is exactly the one documented in ``webdedup.core.fingerprint`` (blake2b token hashes, a
polynomial combination of token hashes with the murmur3 finalizer, ``a_i * x + b_i mod 2**64``
permutations); these functions only run it as tight loops over a whole batch instead of many numpy
passes.  ``tests/python/unit/test_kernels.py`` checks them against plain Python (hashlib's blake2b, Python
integers) on random and Unicode text.

All functions are ``nogil``: worker threads of one process run them in parallel.  ``cache=True`` keeps
the machine code in ``__pycache__`` so that only the first process after an install compiles them
(``make`` does that once, at install: ``python -m webdedup.core.warm``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from webdedup.core.blake2b import blake2b_64, blake2b_words
from webdedup.core.words import MASK64, bytes_at, low_bytes, text_words, token_bytes

U64 = np.uint64
FMIX_C1 = U64(0xFF51AFD7ED558CCD)
FMIX_C2 = U64(0xC4CEB9FE1A85EC53)
POLY = U64(0x9E3779B97F4A7C15)  # odd multiplier for polynomial combinations
LEN_SALT = U64(0xD6E8FEB86659FD93)
SET_SALT = U64(0xA0761D6478BD642F)
_FNV_OFFSET = U64(0xCBF29CE484222325)
_FNV_PRIME = U64(0x100000001B3)
_SPACE = 32


@njit(cache=True, nogil=True)
def map_ascii(data):
    """``data`` (UTF-8 bytes) with every ASCII byte mapped as ``map_char`` maps it (letters lowercased,
    digits kept, everything else a space) and other bytes unchanged, plus 4 zero bytes of slack (the
    decoding of the last character reads past its end)."""
    n = len(data)
    out = np.empty(n + 4, dtype=np.uint8)
    for i in range(n):
        c = data[i]
        if c < 0x80:
            if 0x41 <= c <= 0x5A:
                c += 0x20
            elif not (0x61 <= c <= 0x7A or 0x30 <= c <= 0x39):
                c = _SPACE
        out[i] = c
    out[n:] = 0
    return out


@njit(cache=True, nogil=True, inline="always")
def fmix64(h):
    """murmur3's 64-bit finalizer (a bijection) of one uint64."""
    h ^= h >> U64(33)
    h *= FMIX_C1
    h ^= h >> U64(33)
    h *= FMIX_C2
    return h ^ (h >> U64(33))


@njit(cache=True, nogil=True)
def _length_salt(length):
    return U64(length) * LEN_SALT


@njit(cache=True, nogil=True)
def _grow(table, distinct_hash, distinct_start):
    """The token table (rows: key, first 8 bytes, next 8 bytes, id << 32 | length) and the per-id arrays
    at twice the size."""
    capacity = 2 * len(table)
    mask = U64(capacity - 1)
    grown = np.zeros((capacity, 4), dtype=U64)
    for row in range(len(table)):
        if table[row, 3] != U64(0):
            slot = table[row, 0] & mask
            while grown[slot, 3] != U64(0):
                slot = (slot + U64(1)) & mask
            grown[slot] = table[row]
    more = capacity // 2 + 1
    hashes = np.zeros(more, dtype=U64)
    hashes[: len(distinct_hash)] = distinct_hash
    starts = np.zeros(more, dtype=np.int64)
    starts[: len(distinct_start)] = distinct_start
    return grown, hashes, starts


@njit(cache=True, nogil=True)
def _scan_tokens(
    data, words, last, offsets, state, table, distinct_hash, distinct_start, token_hash, token_counts
):
    """Hash the tokens of documents ``state[0]`` onwards until the table could get more than half full
    within the next document; returns True when every document is done.  ``state`` holds (next
    document, tokens so far, distinct tokens so far + 1); ``words`` and ``last`` are ``data`` as 8-byte
    words (``text_words``), read a word at a time.  No array is reallocated here, which keeps this loop
    free of reference counting."""
    mask = U64(len(table) - 1)
    n_words = len(words)
    n_docs = len(offsets) - 1
    d = state[0]
    t = state[1]
    n_distinct = state[2]
    while d < n_docs:
        p = offsets[d]
        end = offsets[d + 1]
        if 2 * (n_distinct + (end - p) // 2 + 1) > len(table):
            break
        first = t
        while p < end:
            # (the words are read here, not in a helper taking the arrays: that costs reference counting)
            q = p >> 3
            low = words[q] if q < n_words else last[q - n_words]
            high = words[q + 1] if q + 1 < n_words else last[q + 1 - n_words]
            word = bytes_at(low, high, p)
            if word & U64(0xFF) == U64(_SPACE):
                p += 1
                continue
            # the token's first 8 bytes (head), next 8 (tail) and the FNV-1a hash of the rest, read a word at
            # a time: a token ends at the first space byte or at the document's end
            start = p
            length = min(token_bytes(word), end - start)
            head = word & low_bytes(length)
            tail = U64(0)
            rest = _FNV_OFFSET
            if length == 8:
                after = words[q + 2] if q + 2 < n_words else last[q + 2 - n_words]
                word = bytes_at(high, after, start)
                more = min(token_bytes(word), end - start - 8)
                tail = word & low_bytes(more)
                length += more
                if more == 8:
                    p = start + 16
                    while p < end and data[p] != _SPACE:
                        rest = (rest ^ U64(data[p])) * _FNV_PRIME
                        p += 1
                    length = p - start
            p = start + length + 1  # past the space that ended the token (or past the document's end)
            # the table's key, not the token's hash (that is blake2b's, below): one finalizer is enough to
            # spread the slots, and a second cost a tenth of this loop
            key = fmix64((head ^ _length_salt(length)) + tail * POLY + rest)
            slot = key & mask
            found = 0
            while table[slot, 3] != U64(0):
                if (
                    table[slot, 0] == key
                    and table[slot, 1] == head
                    and table[slot, 2] == tail
                    and np.int64(table[slot, 3] & U64(0xFFFFFFFF)) == length
                ):
                    candidate = np.int64(table[slot, 3] >> U64(32))
                    other = distinct_start[candidate]
                    same = True
                    for i in range(16, length):
                        if data[start + i] != data[other + i]:
                            same = False
                            break
                    if same:
                        found = candidate
                        break
                slot = (slot + U64(1)) & mask
            if found == 0:
                found = n_distinct
                n_distinct += 1
                if length <= 16:  # head and tail hold the whole token
                    distinct_hash[found] = blake2b_words(head, tail, length)
                else:
                    distinct_hash[found] = blake2b_64(data, start, length)
                distinct_start[found] = start
                table[slot, 0] = key
                table[slot, 1] = head
                table[slot, 2] = tail
                table[slot, 3] = (U64(found) << U64(32)) | U64(length)
            token_hash[t] = distinct_hash[found]
            t += 1
        token_counts[d] = t - first
        d += 1
    state[0] = d
    state[1] = t
    state[2] = n_distinct
    return d == n_docs


def token_hashes(data, offsets):
    """The blake2b hash of every token of a batch of normalized texts, and the token count per text.

    ``data`` is the UTF-8 bytes (uint8) and ``offsets`` (int64, n_docs + 1) the text bounds, as in an
    Arrow string array; tokens are the maximal runs of bytes other than a space (for normalized text,
    which has single spaces and no space at either end, exactly ``text.split(" ")``).  blake2b runs
    once per distinct token of the batch: tokens are looked up in an open-addressing table whose rows
    hold a key and the first 16 bytes (one cache line per probe; longer tokens compare the rest), kept
    at most half full.
    """
    words, last = text_words(data)
    return _token_hashes(data, words, last, offsets)


@njit(cache=True, nogil=True)
def _token_hashes(data, words, last, offsets):
    n_docs = len(offsets) - 1
    token_counts = np.zeros(n_docs, dtype=np.int64)
    # a token is at least one byte and tokens are separated: at most (bytes + 1) // 2 per document
    token_hash = np.empty((offsets[n_docs] - offsets[0] + n_docs) // 2 + 1, dtype=U64)
    table = np.zeros((1 << 14, 4), dtype=U64)  # a row whose last word is 0 is empty (ids start at 1)
    distinct_hash = np.zeros(len(table) // 2 + 1, dtype=U64)
    distinct_start = np.zeros(len(table) // 2 + 1, dtype=np.int64)
    state = np.array([0, 0, 1], dtype=np.int64)
    while not _scan_tokens(
        data, words, last, offsets, state, table, distinct_hash, distinct_start, token_hash, token_counts
    ):
        table, distinct_hash, distinct_start = _grow(table, distinct_hash, distinct_start)
    return token_hash[: state[1]], token_counts


@njit(cache=True, nogil=True)
def distinct_shingles(token_hash, token_counts, shingle_size):
    """Each document's distinct shingle hashes from its token hashes (``token_counts`` per document)."""
    n_docs = len(token_counts)
    # shingles: full windows of shingle_size tokens; a document with fewer tokens has one shingle of all
    # its tokens.  A window's polynomial is rolled from the previous one (drop the first token's term,
    # shift, add the next token: the same value mod 2**64 as computing it afresh).  Repeats within a
    # document are dropped with a small open-addressing set whose empty slots hold 0 (cleared per
    # document; the hash 0 itself is tracked by a flag); the kept hashes stay in first-occurrence order.
    k = shingle_size
    size = 0
    most = 0
    for d in range(n_docs):
        windows = max(token_counts[d] - k + 1, 1) if token_counts[d] > 0 else 0
        size += windows
        most = max(most, windows)
    hashes = np.empty(size, dtype=U64)
    shingle_counts = np.zeros(n_docs, dtype=np.int64)
    set_keys = np.zeros(n_docs, dtype=np.int64)
    seen_capacity = 16
    while seen_capacity < 2 * most:
        seen_capacity *= 2
    seen = np.zeros(seen_capacity, dtype=U64)
    written = 0
    first = 0
    for d in range(n_docs):
        n = token_counts[d]
        if n == 0:
            continue
        width = min(k, n)
        salt = _length_salt(width)
        lead = U64(1)  # POLY ** (width - 1): the weight of a window's first token
        for _ in range(width - 1):
            lead *= POLY
        doc_mask = 16
        while doc_mask < 2 * (n - width + 1):
            doc_mask *= 2
        seen[:doc_mask] = 0
        doc_mask -= 1
        start = written
        total_mix = U64(0)
        has_zero = False
        acc = U64(0)
        for j in range(width):
            acc = acc * POLY + token_hash[first + j]
        last = first + n - width
        i = first
        while True:
            x = fmix64(acc ^ salt)
            new = True
            if x == U64(0):
                new = not has_zero
                has_zero = True
            else:
                slot = np.int64(x & U64(doc_mask))
                while seen[slot] != U64(0):
                    if seen[slot] == x:
                        new = False
                        break
                    slot = (slot + 1) & doc_mask
                if new:
                    seen[slot] = x
            if new:
                hashes[written] = x
                written += 1
                total_mix += fmix64(x ^ SET_SALT)
            if i == last:
                break
            acc = (acc - token_hash[i] * lead) * POLY + token_hash[i + width]
            i += 1
        shingle_counts[d] = written - start
        set_keys[d] = np.int64(fmix64(total_mix ^ (U64(written - start) * LEN_SALT)))
        first += n
    return hashes[:written].copy(), shingle_counts, set_keys


def shingle_hashes(data, offsets, shingle_size):
    token_hash, token_counts = token_hashes(data, offsets)
    hashes, shingle_counts, set_keys = distinct_shingles(token_hash, token_counts, shingle_size)
    return hashes, shingle_counts, token_counts, set_keys


@njit(cache=True, nogil=True)
def minhash(hashes, shingle_counts, a, b):
    """(n_docs, len(a)) uint64 signatures: per document and permutation, the minimum of ``a_i * x + b_i``
    (mod 2**64) over its shingle hashes, shifted right by one bit; all zero for a document without
    shingles."""
    n_docs = len(shingle_counts)
    num_hashes = len(a)
    signature = np.zeros((n_docs, num_hashes), dtype=U64)
    mins = np.empty(num_hashes, dtype=U64)
    position = 0
    for d in range(n_docs):
        count = shingle_counts[d]
        if count == 0:
            continue
        for i in range(num_hashes):
            mins[i] = MASK64
        for s in range(position, position + count):
            x = hashes[s]
            for i in range(num_hashes):
                mins[i] = min(mins[i], a[i] * x + b[i])
        for i in range(num_hashes):
            signature[d, i] = mins[i] >> U64(1)
        position += count
    return signature


@njit(cache=True, nogil=True)
def band_keys(signature, rows_per_band):
    """(n_docs, bands) non-negative int64 band keys: per band ``b``, the finalizer of the polynomial
    combination of ``b`` and the band's ``rows_per_band`` signature values, shifted right by one bit."""
    n_docs, num_hashes = signature.shape
    bands = num_hashes // rows_per_band
    keys = np.empty((n_docs, bands), dtype=np.int64)
    for d in range(n_docs):
        for band in range(bands):
            acc = U64(band)
            for j in range(band * rows_per_band, (band + 1) * rows_per_band):
                acc = acc * POLY + signature[d, j]
            keys[d, band] = np.int64(fmix64(acc) >> U64(1))
    return keys


@njit(cache=True, nogil=True)
def sorted_intersections(left_values, left_offsets, right_values, right_offsets):
    """Per row, how many values two ascending lists have in common (a merge: O(len(left) + len(right))).

    Row ``i``'s lists are ``left_values[left_offsets[i]:left_offsets[i + 1]]`` and the same on the right,
    each strictly ascending (the shingle sets: distinct hashes in unsigned order, so pass uint64 views).
    """
    n = len(left_offsets) - 1
    shared = np.zeros(n, dtype=np.int64)
    intersections(
        left_values,
        left_offsets[:-1],
        left_offsets[1:],
        right_values,
        right_offsets[:-1],
        right_offsets[1:],
        shared,
        np.arange(n),
    )
    return shared


@njit(cache=True, nogil=True)
def intersections(left_values, left_starts, left_ends, right_values, right_starts, right_ends, out, rows):
    """For each ``row`` of ``rows``: ``out[row]`` = how many values the ascending lists
    ``left_values[left_starts[row]:left_ends[row]]`` and ``right_values[right_starts[row]:right_ends[row]]``
    have in common (a merge; the lists hold distinct values, compared as uint64)."""
    for row in rows:
        i = left_starts[row]
        i_end = left_ends[row]
        j = right_starts[row]
        j_end = right_ends[row]
        count = 0
        while i < i_end and j < j_end:
            a = left_values[i]
            b = right_values[j]
            if a == b:
                count += 1
                i += 1
                j += 1
            elif a < b:
                i += 1
            else:
                j += 1
        out[row] = count
