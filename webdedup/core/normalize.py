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
    is the same as stepping over characters of ``S``.  Scans longer than ``SIGMA_SCAN_LIMIT``
    characters send their document to ``reference.normalize_text``.

Method
    One compiled pass per batch (``webdedup.core.utf8_kernel``) maps ASCII bytes by a table, decodes every
    other character and writes its exact output bytes from a per-code-point table (``charmap.TABLE``,
    filled lazily from ``map_char``), collapsing spaces as it writes and lowercasing capital sigmas by the
    rule above; the documents it cannot finish alone go to ``reference.normalize_text``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup.core import kernels, reference, utf8_kernel
from webdedup.core.charmap import TABLE


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


def _to_arrow(data: pa.Buffer, offsets: np.ndarray) -> pa.LargeStringArray:
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    return pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), data)


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

    ``tokens_only``: the caller only splits the texts on spaces (shingling), so an ASCII batch is returned
    mapped (``kernels.map_ascii``) but with its runs of spaces and spaces at either end left as they are,
    which gives exactly the normalized text's tokens, ``text.split(" ")`` without the empty strings.
    """
    arr = _as_string_array(bodies)
    offsets, data = _buffers(arr)
    if len(data) == 0:
        return _to_arrow(pa.py_buffer(b""), offsets)
    if int(data.max()) < 0x80:
        if tokens_only:
            return _to_arrow(pa.py_buffer(kernels.map_ascii(data)[: len(data)]), offsets)
    else:
        arr.validate(full=True)  # the decoding relies on well-formed UTF-8
    n_docs = len(offsets) - 1
    out_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    special = np.zeros(n_docs, dtype=np.bool_)
    unknown = np.empty(4096, dtype=np.int64)
    out = np.empty(len(data) + len(data) // 4 + 16, dtype=np.uint8)
    status, first = 1, 0
    while status:
        status, first = utf8_kernel.normalize_utf8(
            data,
            offsets,
            TABLE.flags,
            TABLE.context,
            TABLE.out,
            TABLE.out_len,
            out,
            out_offsets,
            special,
            unknown,
            first,
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
    texts = arr.take(pa.array(docs)).to_pylist()
    redone = pa.array([reference.normalize_text(text) for text in texts], type=pa.large_string())
    index = np.arange(n_docs, dtype=np.int64)
    index[docs] = n_docs + np.arange(len(docs))
    return pa.concat_arrays([result, redone]).take(pa.array(index))
