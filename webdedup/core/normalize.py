"""Vectorized, exact normalization of Arrow string arrays: the spec's ``normalize_text`` on every element.

``normalize_array(bodies)[i] == reference.normalize_text(bodies[i])`` for every document (nulls give "").

Why per-character replacement is exact
    The spec's steps are NFD, drop ``unicodedata.combining`` characters, ``str.lower``, ``[^\\w\\s]+`` ->
    space, ``_`` -> space, then ``" ".join(text.split())``.  NFD of a string is the concatenation of the
    characters' NFDs followed by canonical reordering, which only permutes characters of non-zero
    combining class, and those are all dropped.  So the text that is lowercased, ``S``, is the
    concatenation of ``T(c)`` (NFD of ``c`` without combining characters) over the document's characters.
    ``str.lower`` is per character except for U+03A3 (CPython's ``lower_ucs4`` special-cases exactly
    that code point); U+03A3 is the only character whose ``T`` contains it (checked when the table is
    filled: any other such character sends its document to ``reference.normalize_text``).  Python's
    Unicode ``\\w`` is ``str.isalnum()`` or ``_`` and ``\\s`` is ``str.isspace()``, so after the
    replacements every character is alphanumeric (never whitespace) or whitespace, and splitting on
    whitespace equals splitting on the spaces that ``map_char`` produces.  Hence the result is the
    concatenation of ``map_char(c)`` over the document with runs of spaces collapsed and the ends trimmed,
    except that a capital sigma may lowercase to the final sigma.

Final sigma
    CPython's ``handle_capital_sigma`` makes U+03A3 at index ``i`` of ``S`` final exactly when the nearest
    character before it that is not case-ignorable exists and is cased, and the nearest such character
    after it does not exist or is not cased.  For one character ``x`` both properties are read off
    ``str.lower`` itself: ``(x + "Σ").lower()`` ends with "ς" iff ``x`` is cased and not case-ignorable;
    otherwise ``("A" + x + "Σ").lower()`` does iff ``x`` is case-ignorable.  The table stores, per code
    point ``c``, the class (case-ignorable / cased / other) of the last and of the first character of
    ``T(c)`` that is not case-ignorable, and the scan steps over whole characters of the document, which
    is the same as stepping over characters of ``S``.  Scans longer than ``_SIGMA_SCAN_LIMIT``
    characters send their document to ``reference.normalize_text``.

Method
    A batch with non-ASCII bytes takes one compiled pass (``webdedup.core.utf8_kernel``) over the per-code-
    point table (``charmap.TABLE``, filled lazily from ``map_char``), except its documents with a capital
    sigma.  Those, and ASCII batches, take numpy steps: (1) ASCII bytes mapped (``kernels.map_ascii``);
    (2) non-ASCII characters decoded by their UTF-8 lead bytes and overwritten by an in-place replacement
    of their own length from the table (the output bytes padded with spaces when the output begins or
    ends with a space, else with a "deleted" byte 0xFF, never in UTF-8), final sigmas patched; (3) marked
    bytes dropped, runs of spaces collapsed and the ends trimmed, in one Arrow filter.  Documents with a
    character whose output is longer than itself (Hangul syllables become two or three jamo, ...) are
    rebuilt by a general splice (output positions from a cumulative sum).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup.core import kernels, reference, utf8_kernel
from webdedup.core.charmap import (
    CAPITAL_SIGMA,
    CASED,
    DELETED,
    DELETES,
    EXPANDS,
    FINAL_SIGMA_LAST_BYTE,
    IGNORABLE,
    LEAD_PAYLOAD,
    MAX_OUT,
    NEEDS_REFERENCE,
    OTHER,
    PAYLOAD_BY_SIZE,
    SIGMA,
    SIGMA_SCAN_LIMIT,
    SPACE,
    TABLE,
    U8,
)

# --------------------------------------------------------------------------------------------------
# Helpers


def _buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets rebased to 0 as int64, data bytes) of a string/large_string array, zero-copy."""
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[arr.offset : arr.offset + len(arr) + 1]
    offsets = offsets.astype(np.int64)
    start, stop = int(offsets[0]), int(offsets[-1])
    if stop > start:
        data = np.frombuffer(data_buf, dtype=np.uint8)[start:stop]
    else:
        data = np.zeros(0, dtype=np.uint8)
    if start:
        offsets -= start
    return offsets, data


def _rows(buf: np.ndarray, width: int) -> np.ndarray:
    """``buf[i : i + width]`` for every i, as one void element each (a strided, overlapping view)."""
    return np.ndarray((len(buf) - width + 1,), dtype=f"V{width}", buffer=buf, strides=(1,))


def _code_points(mapped: np.ndarray, n: int):
    """(sequence length, lead positions, code points) for each UTF-8 sequence length in ``mapped[:n]``."""
    buf = mapped[:n]
    lead = buf >= U8(0xC0)
    three_or_four = buf >= U8(0xE0)
    if not three_or_four.any():
        groups = [(2, lead)]
    else:
        four = buf >= U8(0xF0)
        if four.any():
            three_or_four &= ~four
        groups = [(2, lead & ~(three_or_four | four)), (3, three_or_four), (4, four)]
    for size, mask in groups:
        positions = np.flatnonzero(mask)
        if len(positions) == 0:
            continue
        cp = (buf[positions] & U8(LEAD_PAYLOAD[size])).astype(np.intp)
        for j in range(1, size):
            cp <<= 6
            cp |= mapped[j:][positions] & U8(0x3F)
        yield size, positions, cp


def _prefix_counts(bits: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Number of set bits (little-endian bit order) before each of ``positions``."""
    words = np.zeros(len(bits) // 8 + 2, dtype="<u8")
    words.view(np.uint8)[: len(bits)] = bits
    before = np.zeros(len(words), dtype=np.int64)
    np.cumsum(np.bitwise_count(words[:-1]), out=before[1:])
    word = positions >> 6
    below = np.left_shift(np.uint64(1), (positions & 63).astype(np.uint64)) - np.uint64(1)
    return before[word] + np.bitwise_count(words[word] & below)


def _first_solid(solid: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Position of the first True of ``solid[start:end]`` for each range (``end`` when there is none)."""
    pos = starts.copy()
    active = np.arange(len(pos))
    for _ in range(8):  # leading runs are short: step all ranges together
        active = active[(pos[active] < ends[active]) & ~solid[np.minimum(pos[active], len(solid) - 1)]]
        if len(active) == 0:
            return pos
        pos[active] += 1
    for i in active.tolist():  # long leading runs: pos[i] <= end, and everything before it is blank
        start, end = int(pos[i]), int(ends[i])
        hit = start + int(np.argmax(solid[start:end])) if start < end else end
        pos[i] = hit if hit < end and solid[hit] else end
    return pos


def _collapse(buf: np.ndarray, offsets: np.ndarray, deletions: bool = False) -> tuple[pa.Buffer, np.ndarray]:
    """Drop deleted bytes, collapse runs of spaces to one space, trim each document's ends.

    Returns the new (data buffer, offsets).  Deleted bytes follow a non-space of their own character or
    make up a whole character; unless such a character directly follows a space, deleted bytes never sit
    between a space and what follows it, so one pass decides every byte.
    """
    n = len(buf)
    if n == 0:
        return pa.py_buffer(b""), offsets
    space = buf == U8(SPACE)
    if deletions:
        deleted = buf == U8(DELETED)
        if (space[:-1] & deleted[1:]).any():
            live = ~deleted
            offsets = offsets - np.searchsorted(np.flatnonzero(deleted), offsets)
            return _collapse(buf[live], offsets)
        solid = ~(space | deleted)
        # Keep non-spaces, and a space when the next byte is a non-space: the last space of each run.
        keep = solid.copy()
        keep[:-1] |= space[:-1] & solid[1:]
    else:
        solid = ~space
        keep = solid.copy()
        keep[:-1] |= solid[1:]
    starts, ends = offsets[:-1], offsets[1:]
    nonempty = ends > starts
    starts, ends = starts[nonempty], ends[nonempty]
    # A document's last byte is kept only if it is a non-space (no trailing space) ...
    keep[ends - 1] = solid[ends - 1]
    # ... and in a document that starts without a non-space, the byte before its first non-space goes
    # (the last space of the leading run, or a deleted byte).
    blank = ~solid[starts]
    first = _first_solid(solid, starts[blank], ends[blank])
    keep[first[first < ends[blank]] - 1] = False
    bits = np.packbits(keep, bitorder="little")
    mask = pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)])
    kept = pc.filter(pa.Array.from_buffers(pa.uint8(), n, [None, pa.py_buffer(buf)]), mask)
    return kept.buffers()[1].slice(kept.offset, len(kept)), _prefix_counts(bits, offsets)


def _char_at(data: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Code points and UTF-8 lengths of the characters that start at byte positions ``starts``."""
    first = data[starts].astype(np.intp)
    size = 1 + (first >= 0xC0) + (first >= 0xE0) + (first >= 0xF0)
    cp = first & PAYLOAD_BY_SIZE[size]
    for j in (1, 2, 3):
        more = np.flatnonzero(size > j)
        cp[more] = (cp[more] << 6) | (data[starts[more] + j] & 0x3F)
    return cp, size


def _final_sigmas(data: np.ndarray, offsets: np.ndarray, sigmas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions of the capital sigmas that become final, documents whose scan was too long)."""
    doc = np.searchsorted(offsets, sigmas, side="right") - 1
    starts, ends = offsets[doc], offsets[doc + 1]
    # Before: the nearest character with a non-case-ignorable character in T(c) must end with a cased one.
    cased_before = np.zeros(len(sigmas), dtype=bool)
    pos = sigmas.copy()
    active = np.arange(len(sigmas))
    for _ in range(SIGMA_SCAN_LIMIT):
        prev = pos[active] - 1
        inside = prev >= starts[active]
        for _ in range(3):  # back over continuation bytes to the previous lead byte
            prev[inside & ((data[np.maximum(prev, 0)] & 0xC0) == 0x80)] -= 1
        active, prev = active[inside], prev[inside]
        cp, _ = _char_at(data, prev)
        TABLE.lookup(cp)
        before = TABLE.context[cp] & 3
        cased_before[active[before == CASED]] = True
        ignorable = before == IGNORABLE
        active = active[ignorable]
        pos[active] = prev[ignorable]
        if len(active) == 0:
            break
    too_long = [active]  # (their cased_before is False)
    # After: the nearest such character must not exist or not be cased.
    final = np.zeros(len(sigmas), dtype=bool)
    active = np.flatnonzero(cased_before)
    pos = sigmas + 2
    for _ in range(SIGMA_SCAN_LIMIT):
        if len(active) == 0:
            break
        at_end = pos[active] >= ends[active]
        final[active[at_end]] = True
        active = active[~at_end]
        cp, size = _char_at(data, pos[active])
        TABLE.lookup(cp)
        after = TABLE.context[cp] >> 2
        final[active[after == OTHER]] = True
        ignorable = after == IGNORABLE
        active = active[ignorable]
        pos[active] += size[ignorable]
    too_long.append(active)
    return sigmas[final], doc[np.concatenate(too_long)]


def _doc_mask(positions: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Boolean mask of the documents that contain the given byte positions."""
    mask = np.zeros(len(offsets) - 1, dtype=bool)
    mask[np.searchsorted(offsets, positions, side="right") - 1] = True
    return mask


def _to_arrow(data: pa.Buffer, offsets: np.ndarray) -> pa.LargeStringArray:
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    return pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), data)


# --------------------------------------------------------------------------------------------------
# The general splice (documents with expanding characters)


def _splice(arr: pa.Array) -> pa.LargeStringArray:
    """normalize_array for documents whose sigma scans are short, any output lengths (full-size cumsum)."""
    offsets, data = _buffers(arr)
    n = len(data)
    mapped = kernels.map_ascii(data)  # a writable copy with ASCII mapped
    # Output bytes per input byte: 1 for ASCII, the output length for lead bytes, 0 for continuations.
    is_ascii = mapped[:n] < U8(0x80)
    counts = is_ascii.astype(np.int64)
    leads, cps = [], []
    for _, positions, cp in _code_points(mapped, n):
        TABLE.lookup(cp)
        counts[positions] = TABLE.out_len[cp]
        leads.append(positions)
        cps.append(cp)
    positions = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=positions[1:])
    out = np.empty(int(positions[-1]), dtype=np.uint8)
    ascii_pos = np.flatnonzero(is_ascii)
    out[positions[ascii_pos]] = mapped[ascii_pos]
    if leads:
        lead_pos, cp = np.concatenate(leads), np.concatenate(cps)
        lengths = TABLE.out_len[cp]
        for length in np.flatnonzero(np.bincount(lengths, minlength=MAX_OUT + 1)[1:]) + 1:
            chosen = np.flatnonzero(lengths == length)
            # Each chosen character's output bytes, moved as one void element into its slot.
            rows = TABLE.out_rows[cp[chosen]].view(np.uint8).reshape(-1, MAX_OUT)[:, :length]
            rows = np.ascontiguousarray(rows).view(f"V{length}")[:, 0]
            _rows(out, length)[positions[lead_pos[chosen]]] = rows
        # The caller sends documents whose scans are too long to the reference function.
        final, _ = _final_sigmas(data, offsets, lead_pos[cp == CAPITAL_SIGMA])
        out[positions[final] + 1] = FINAL_SIGMA_LAST_BYTE
    return _to_arrow(*_collapse(out, positions[offsets]))


# --------------------------------------------------------------------------------------------------
# The batch function


def _as_string_array(bodies: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(bodies, pa.ChunkedArray):
        bodies = bodies.combine_chunks()
    if not (pa.types.is_string(bodies.type) or pa.types.is_large_string(bodies.type)):
        bodies = bodies.cast(pa.large_string())
    if bodies.null_count:
        bodies = pc.fill_null(bodies, "")
    return bodies


def normalize_array(bodies: pa.Array | pa.ChunkedArray, *, tokens_only: bool = False) -> pa.LargeStringArray:
    """``[reference.normalize_text(x) for x in bodies]`` (nulls -> "") as a large_string array.

    ``tokens_only``: the caller only splits the texts on spaces (shingling), so for an ASCII batch the
    mapped text is returned before step 3: runs of spaces and spaces at either end left as they are,
    which gives exactly the normalized text's tokens, ``text.split(" ")`` without the empty strings.
    """
    arr = _as_string_array(bodies)
    offsets, data = _buffers(arr)
    if len(data) and int(data.max()) >= 0x80:
        arr.validate(full=True)  # the decoding relies on well-formed UTF-8
        return _normalize_compiled(arr, offsets, data)
    return _normalize_vectorized(arr, offsets, data, tokens_only=tokens_only)


def _normalize_compiled(arr: pa.Array, offsets: np.ndarray, data: np.ndarray) -> pa.LargeStringArray:
    """normalize_array by ``utf8_kernel.normalize_utf8``; the documents it marks by the numpy steps."""
    n_docs = len(offsets) - 1
    out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    special = np.zeros(n_docs, dtype=np.bool_)
    unknown = np.empty(4096, dtype=np.int64)
    out = np.empty(len(data) + len(data) // 4 + 16, dtype=np.uint8)
    status, first = 1, 0
    while status:
        status, first = utf8_kernel.normalize_utf8(
            data, offsets, TABLE.flags, TABLE.out, TABLE.out_len, out, out_offsets, special, unknown, first
        )
        if status < 0:  # the output outgrew its buffer: the bound that always holds
            grown = np.empty(6 * len(data) + 16, dtype=np.uint8)
            grown[: out_offsets[first]] = out[: out_offsets[first]]
            out = grown
        elif status > 0:  # code points not in the table yet
            TABLE.fill(np.unique(unknown[: min(status, len(unknown))]))
    result = _to_arrow(pa.py_buffer(out[: out_offsets[-1]]), out_offsets)
    docs = np.flatnonzero(special)
    if len(docs) == 0:
        return result
    taken = _as_string_array(arr.take(pa.array(docs)))
    redone = _normalize_vectorized(taken, *_buffers(taken))
    index = np.arange(n_docs, dtype=np.int64)
    index[docs] = n_docs + np.arange(len(docs))
    return pa.concat_arrays([result, redone]).take(pa.array(index))


def _normalize_vectorized(
    arr: pa.Array, offsets: np.ndarray, data: np.ndarray, *, tokens_only: bool = False
) -> pa.LargeStringArray:
    """normalize_array by the numpy steps of this module's docstring."""
    n = len(data)
    mapped = kernels.map_ascii(data)  # a writable copy with ASCII mapped
    all_flags = 0
    special_pos, special_flags = [], []
    if n and int(data.max()) >= 0x80:
        arr.validate(full=True)  # the decoding below relies on well-formed UTF-8
        for size, positions, cp in _code_points(mapped, n):
            flags = TABLE.lookup(cp)
            seen = int(np.bitwise_or.reduce(flags))
            all_flags |= seen
            if seen & (EXPANDS | SIGMA | NEEDS_REFERENCE):
                special = np.flatnonzero(flags & (EXPANDS | SIGMA | NEEDS_REFERENCE))
                special_pos.append(positions[special])
                special_flags.append(flags[special])
            # Overwrite each character with its in-place replacement.
            for j in range(size):
                mapped[j:][positions] = TABLE.inplace[j][cp]
    if not all_flags & (EXPANDS | SIGMA | NEEDS_REFERENCE):
        if tokens_only and not all_flags & DELETES:
            return _to_arrow(pa.py_buffer(mapped[:n]), offsets)
        return _to_arrow(*_collapse(mapped[:n], offsets, deletions=bool(all_flags & DELETES)))

    positions, flags = np.concatenate(special_pos), np.concatenate(special_flags)
    use_reference = _doc_mask(positions[(flags & NEEDS_REFERENCE) != 0], offsets)
    if all_flags & SIGMA:
        final, too_long = _final_sigmas(data, offsets, positions[(flags & SIGMA) != 0])
        mapped[final + 1] = FINAL_SIGMA_LAST_BYTE
        use_reference[too_long] = True
    result = _to_arrow(*_collapse(mapped[:n], offsets, deletions=bool(all_flags & DELETES)))
    reference_docs = np.flatnonzero(use_reference)
    expand_docs = np.flatnonzero(_doc_mask(positions[(flags & EXPANDS) != 0], offsets) & ~use_reference)
    if len(expand_docs) == 0 and len(reference_docs) == 0:
        return result

    # Rebuilt documents replace their entries: splice for expanding characters, else the reference.
    pieces = [result]
    index = np.arange(len(arr), dtype=np.int64)
    base = len(arr)
    if len(expand_docs):
        pieces.append(_splice(arr.take(pa.array(expand_docs))))
        index[expand_docs] = base + np.arange(len(expand_docs))
        base += len(expand_docs)
    if len(reference_docs):
        texts = arr.take(pa.array(reference_docs)).to_pylist()
        pieces.append(pa.array([reference.normalize_text(t) for t in texts], type=pa.large_string()))
        index[reference_docs] = base + np.arange(len(reference_docs))
    return pa.concat_arrays(pieces).take(pa.array(index))
