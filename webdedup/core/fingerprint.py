"""Fast, exact document fingerprints: normalization, shingles, MinHash signatures and LSH band keys.

Everything the ``fingerprints`` dbt Python model computes lives here as plain functions, so that pytest,
the benchmark and both engines (DuckDB, Spark) share one implementation.

Exactness
    ``normalize_batch`` returns, for every document, exactly ``reference.normalize_text(body)``, and the
    tokens are ``normalized.split(" ")``, so the shingles are exactly ``reference.token_shingles``.
    The spec's normalization (NFD, drop combining marks, lower, ``[^\\w\\s]+`` -> space, ``_`` -> space,
    collapse whitespace) is a per-character mapping followed by whitespace collapsing, except for one
    rule: Python's ``str.lower`` turns a capital sigma into a final sigma depending on its neighbours.
    ``normalize_batch`` is ``webdedup.core.normalize.normalize_array``: one compiled pass over the Arrow
    UTF-8 buffers through a per-code-point table built lazily from the spec's own steps, capital sigmas
    by CPython's final-sigma rule (why this is exact: that module's docstring).

    ``normalize_text`` (one string) uses ``str.translate`` with the same per-character mapping, and the
    reference function for strings that contain a capital sigma.

Shingle hashes
    Each distinct token gets a 64-bit blake2b hash; a shingle's hash is a polynomial combination of its
    token hashes modulo 2**64 followed by the murmur3 64-bit finalizer (a bijection), with the shingle's
    token count mixed in.  A shingle set is stored as the distinct shingle hashes in unsigned order (as
    signed int64).
    Two different shingles collide with probability about 2**-64, so the exact Jaccard of hash sets equals
    the Jaccard of string sets on any realistic corpus (tests compare both on random and real text).
    Tokens, shingle hashes, set keys and MinHash run as compiled loops in ``webdedup.core.kernels`` (numba);
    normalization and the Arrow plumbing stay here.

MinHash permutation family
    ``h_i(x) = (a_i * x + b_i) mod 2**64`` with ``a_i`` odd: for odd ``a_i`` this is a permutation of the
    64-bit space, computed in exact wrapping uint64 arithmetic, so there is no overflow bias (the
    ``(a*x+b) % p`` formulation overflows when done in 64-bit numpy).  ``x`` is already a well-mixed
    64-bit shingle hash.  ``a_i, b_i`` come from a splitmix64 stream seeded by ``seed`` (pure Python,
    independent of numpy's RNG).  Signature values are the per-permutation minima shifted right by one
    bit, so they fit a signed BIGINT (DuckDB and Spark) and order exactly like the minima.
    Documents without tokens get an all-zero signature, as in the spec.

Band keys
    Band ``b`` covers signature values ``[b*r, (b+1)*r)``; its key is the finalizer of a polynomial
    combination of those values and ``b``, shifted to a non-negative BIGINT.  Equal bands give equal keys;
    unequal bands collide with probability about 2**-63.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup.core import kernels, reference
from webdedup.core.charmap import map_char
from webdedup.core.normalize import normalize_array

U64 = np.uint64
_SIGMA = "\u03a3"

FINGERPRINT_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("token_count", pa.int32(), nullable=False),
        pa.field("shingle_count", pa.int32(), nullable=False),
        pa.field("shingle_set_key", pa.int64(), nullable=False),
        pa.field("signature", pa.list_(pa.int64()), nullable=False),
        pa.field("band_keys", pa.list_(pa.int64()), nullable=False),
    ]
)

# The shingle sets themselves (sorted distinct shingle hashes) are large (8 bytes per shingle, about 5 KB
# per web page) and only exact scoring needs them, so they are computed by a second pass over just the
# documents that take part in a candidate pair, and on DuckDB held only while those pairs are counted
# (webdedup/engines/anchor_scoring.py; on Spark they are the int_shingle_sets table).
SHINGLE_SET_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("shingle_count", pa.int32(), nullable=False),
        pa.field("shingle_set", pa.list_(pa.int64()), nullable=False),
    ]
)


class ParameterError(ValueError):
    """An invalid combination of pipeline settings."""


@dataclass(frozen=True)
class FingerprintParams:
    """The settings a fingerprint depends on.  No defaults here: the pipeline's defaults are the vars in
    dbt_project.yml, which dbt passes in (``webdedup.core.stream.settings_from_row``); ``spec()`` gives
    the specification's own values (webdedup/core/reference.py) for tests and tools."""

    shingle_size: int
    num_hashes: int
    rows_per_band: int
    seed: int

    def __post_init__(self) -> None:
        for name in ("shingle_size", "num_hashes", "rows_per_band", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParameterError(f"{name} must be an integer, got {value!r}")
        if self.shingle_size < 1:
            raise ParameterError(f"shingle_size must be >= 1, got {self.shingle_size}")
        if self.num_hashes < 1:
            raise ParameterError(f"num_hashes must be >= 1, got {self.num_hashes}")
        if self.rows_per_band < 1 or self.num_hashes % self.rows_per_band != 0:
            raise ParameterError(
                f"num_hashes ({self.num_hashes}) must be divisible by rows_per_band ({self.rows_per_band})"
            )
        if not 0 <= self.seed < 2**63:
            raise ParameterError(f"seed must be in [0, 2**63), got {self.seed}")

    @property
    def bands(self) -> int:
        return self.num_hashes // self.rows_per_band

    @classmethod
    def spec(cls, **overrides: int) -> FingerprintParams:
        """The specification's settings (reference.py's constants), with ``overrides``."""
        values = {
            "shingle_size": reference.SHINGLE_SIZE,
            "num_hashes": reference.MINHASH_VALUES,
            "rows_per_band": reference.LSH_ROWS_PER_BAND,
            "seed": reference.MINHASH_SEED,
        }
        return cls(**{**values, **overrides})

    def key(self, *, shingles_only: bool = False) -> str:
        """The settings a stored row depends on, as text kept beside it (an incremental build redoes the
        rows whose key differs); shingle sets depend on shingle_size only."""
        if shingles_only:
            return f"shingle_size={self.shingle_size}"
        return (
            f"shingle_size={self.shingle_size} num_hashes={self.num_hashes} "
            f"rows_per_band={self.rows_per_band} seed={self.seed}"
        )

    @classmethod
    def from_strings(cls, **values: object) -> FingerprintParams:
        """Build from dbt config values (which may arrive as strings); reject anything not an integer."""
        parsed = {}
        for name, value in values.items():
            text = str(value).strip()
            if not text.lstrip("-").isdigit():
                raise ParameterError(f"{name} must be an integer, got {value!r}")
            parsed[name] = int(text)
        return cls(**parsed)


# --------------------------------------------------------------------------------------------------
# Normalization


class _CharTable(dict):
    """A lazily filled str.translate table (code point -> replacement string)."""

    _lock = threading.Lock()

    def __missing__(self, codepoint: int) -> str:
        value = map_char(chr(codepoint))
        with self._lock:
            self[codepoint] = value
        return value


_CHAR_TABLE = _CharTable()


def normalize_text(value: str | None) -> str:
    """Fast equivalent of ``reference.normalize_text`` for one string."""
    if not value:
        return ""
    if _SIGMA in value:
        return reference.normalize_text(value)
    return " ".join(value.translate(_CHAR_TABLE).split())


def normalize_batch(bodies: pa.Array, *, tokens_only: bool = False) -> pa.Array:
    """Normalize an Arrow string array (large_string result); nulls become empty strings.  With
    ``tokens_only`` the texts may keep extra spaces (the same tokens; ``normalize_array``)."""
    return normalize_array(bodies, tokens_only=tokens_only)


# --------------------------------------------------------------------------------------------------
# Hashing helpers (wrapping uint64 arithmetic)


def _splitmix64(state: int, count: int) -> list[int]:
    out = []
    mask = (1 << 64) - 1
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


def permutations(num_hashes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (a_i, b_i) of h_i(x) = a_i * x + b_i mod 2**64, with every a_i odd."""
    stream = _splitmix64(seed, 2 * num_hashes)
    a = np.array([v | 1 for v in stream[0::2]], dtype=U64)
    b = np.array(stream[1::2], dtype=U64)
    return a, b


# --------------------------------------------------------------------------------------------------
# The batch function


@dataclass
class _Shingled:
    hashes: np.ndarray  # uint64, each document's distinct shingle hashes (first-occurrence order)
    shingle_counts: np.ndarray  # int64 per document
    token_counts: np.ndarray  # int64 per document
    set_keys: np.ndarray  # int64 per document: an order-independent key of the shingle set (0 if empty)

    @property
    def doc_index(self) -> np.ndarray:
        """The document of each entry of ``hashes``."""
        return np.repeat(np.arange(len(self.shingle_counts)), self.shingle_counts)

    def sorted_hashes(self) -> np.ndarray:
        """``hashes`` with each document's segment in ascending (unsigned) order."""
        hashes = self.hashes.copy()
        bounds = np.zeros(len(self.shingle_counts) + 1, dtype=np.int64)
        np.cumsum(self.shingle_counts, out=bounds[1:])
        for d in np.flatnonzero(self.shingle_counts > 1):  # numpy's sort: about 10x numba's here
            hashes[bounds[d] : bounds[d + 1]].sort()
        return hashes


def shingle_batch(normalized: pa.Array, shingle_size: int) -> _Shingled:
    """Distinct shingle hashes per document for an array of normalized texts (``kernels``)."""
    normalized = pc.fill_null(normalized, "").cast(pa.large_string())
    _, offsets, data = normalized.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64, count=len(normalized) + 1, offset=8 * normalized.offset)
    data = np.frombuffer(data if data is not None else b"", dtype=np.uint8)
    hashes, shingle_counts, token_counts, set_keys = kernels.shingle_hashes(data, offsets, shingle_size)
    return _Shingled(hashes, shingle_counts, token_counts, set_keys)


def minhash(shingled: _Shingled, params: FingerprintParams) -> np.ndarray:
    """(n_docs, num_hashes) uint64 minima shifted right by one bit; all-zero rows for documents without
    shingles."""
    a, b = permutations(params.num_hashes, params.seed)
    return kernels.minhash(shingled.hashes, shingled.shingle_counts, a, b)


def band_keys(signature: np.ndarray, rows_per_band: int) -> np.ndarray:
    """(n_docs, bands) non-negative int64 band keys (``kernels.band_keys``)."""
    return kernels.band_keys(np.ascontiguousarray(signature, dtype=U64), rows_per_band)


def _list_array(values: np.ndarray, counts: np.ndarray, value_type: pa.DataType) -> pa.Array:
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=value_type))


def fingerprint_batch(batch: pa.RecordBatch, params: FingerprintParams) -> pa.RecordBatch:
    """Fingerprint a batch with columns doc_id and body; returns a batch of FINGERPRINT_SCHEMA."""
    doc_ids = batch.column("doc_id").cast(pa.string())
    shingled = shingle_batch(normalize_batch(batch.column("body"), tokens_only=True), params.shingle_size)
    signature = minhash(shingled, params)
    keys = band_keys(signature, params.rows_per_band)
    n_docs = len(doc_ids)
    return pa.RecordBatch.from_arrays(
        [
            doc_ids,
            pa.array(shingled.token_counts, type=pa.int32()),
            pa.array(shingled.shingle_counts, type=pa.int32()),
            pa.array(shingled.set_keys, type=pa.int64()),
            _list_array(signature.view(np.int64).ravel(), np.full(n_docs, params.num_hashes), pa.int64()),
            _list_array(keys.ravel(), np.full(n_docs, params.bands), pa.int64()),
        ],
        schema=FINGERPRINT_SCHEMA,
    )


def shingle_set_batch(batch: pa.RecordBatch, params: FingerprintParams) -> pa.RecordBatch:
    """The shingle sets of a batch with columns doc_id and body; returns a batch of SHINGLE_SET_SCHEMA.

    The same normalization and shingle hashes as ``fingerprint_batch`` (``shingle_batch``), so the sets
    are exactly those the signatures were computed from.
    """
    sets = shingle_set_array(batch.column("body"), params.shingle_size)
    return pa.RecordBatch.from_arrays(
        [batch.column("doc_id").cast(pa.string()), pc.list_value_length(sets).cast(pa.int32()), sets],
        schema=SHINGLE_SET_SCHEMA,
    )


def shingle_set_array(bodies, shingle_size: int) -> pa.ListArray:
    """The shingle set of every body of ``bodies`` (an Arrow string array; a null body has none) as a
    list<int64> array: each set's distinct hashes in ascending unsigned order, as signed int64."""
    if isinstance(bodies, pa.ChunkedArray):
        bodies = bodies.combine_chunks()
    shingled = shingle_batch(normalize_batch(bodies, tokens_only=True), shingle_size)
    return _list_array(shingled.sorted_hashes().view(np.int64), shingled.shingle_counts, pa.int64())


def _list_parts(lists) -> tuple[np.ndarray, np.ndarray]:
    """(values as uint64, int64 offsets) of an Arrow list<int64> array (or chunked array)."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    values = lists.values.to_numpy(zero_copy_only=False).view(U64)
    return values, np.asarray(lists.offsets, dtype=np.int64)


def shared_shingle_counts(left, right) -> pa.Array:
    """Per row, the number of shingles two shingle sets (list<int64> arrays of sorted sets, as
    int_shingle_sets stores them) have in common: the intersection size of exact Jaccard.  A null set
    counts as empty."""
    left_values, left_offsets = _list_parts(pc.fill_null(left, pa.scalar([], left.type)))
    right_values, right_offsets = _list_parts(pc.fill_null(right, pa.scalar([], right.type)))
    return pa.array(kernels.sorted_intersections(left_values, left_offsets, right_values, right_offsets))


def signature_overlaps(left, right) -> pa.Array:
    """Per row, the share of the left signature's positions at which two MinHash signatures (list<int64>
    arrays) hold the same value, as a float64 array: scored_pairs' signature_overlap.  A null or empty
    left signature gives 0.0; positions past the shorter signature, and null values, never agree.  One
    numpy comparison when every row's two signatures have one length and no nulls (the pipeline's);
    other rows, row by row."""
    if left.null_count or right.null_count or _has_null_values(left) or _has_null_values(right):
        return _overlaps_by_row(left, right)
    (left_values, left_offsets), (right_values, right_offsets) = _list_parts(left), _list_parts(right)
    rows = len(left_offsets) - 1
    width = int(left_offsets[1] - left_offsets[0]) if rows else 0
    if not width or np.any(np.diff(left_offsets) != width) or np.any(np.diff(right_offsets) != width):
        return _overlaps_by_row(left, right)
    lefts = left_values[left_offsets[0] : left_offsets[-1]].reshape(rows, width)
    rights = right_values[right_offsets[0] : right_offsets[-1]].reshape(rows, width)
    return pa.array(np.count_nonzero(lefts == rights, axis=1) / width, pa.float64())


def _has_null_values(lists) -> bool:
    chunks = lists.chunks if isinstance(lists, pa.ChunkedArray) else [lists]
    return any(chunk.values.null_count for chunk in chunks)


def _overlaps_by_row(left, right) -> pa.Array:
    return pa.array(
        [_overlap(a, b) for a, b in zip(left.to_pylist(), right.to_pylist(), strict=True)], pa.float64()
    )


def _overlap(left: list | None, right: list | None) -> float:
    if not left:
        return 0.0
    return sum(1 for a, b in zip(left, right or (), strict=False) if a is not None and a == b) / len(left)


def shingle_set(body: str | None, shingle_size: int) -> list[int]:
    """One document's shingle set (sorted distinct shingle hashes as signed int64), exactly as exact
    scoring uses it (``shingle_set_array``); a null body has none."""
    return shingle_set_array(pa.array([body], pa.string()), shingle_size)[0].as_py()
