"""Fast, exact document fingerprints: normalization, shingles, MinHash signatures and LSH band keys.

Everything the ``fingerprints`` dbt Python model computes lives here as plain functions, so that pytest,
the benchmark and both engines (DuckDB, Spark) share one implementation.

Exactness
    ``normalize_batch`` returns, for every document, exactly ``reference.normalize_text(body)``, and the
    tokens are ``normalized.split(" ")``, so the shingles are exactly ``reference.token_shingles``.
    The spec's normalization (NFD, drop combining marks, lower, ``[^\\w\\s]+`` -> space, ``_`` -> space,
    collapse whitespace) is a per-character mapping followed by whitespace collapsing, except for one
    rule: Python's ``str.lower`` turns a capital sigma into a final sigma depending on its neighbours.
    ``normalize_batch`` is ``webdedup.normalize.normalize_array``, vectorized with numpy over the Arrow
    UTF-8 buffers (the argument for exactness is in that module's docstring):

    * ASCII bytes are mapped directly (for ASCII, ``\\w`` is ``[A-Za-z0-9_]``);
    * other characters are decoded and replaced through a per-code-point table built lazily from the
      spec's own steps (NFD, ``unicodedata.combining``, ``str.lower``, ``str.isalnum``/``str.isspace``,
      which are exactly Python's Unicode ``\\w`` and ``\\s``);
    * a capital sigma becomes "σ" or "ς" by CPython's Final_Sigma rule, applied to its neighbouring
      characters with properties read off ``str.lower`` itself (documents whose scan would pass more
      than 32 case-ignorable characters use the reference function);
    * runs of spaces are collapsed and ends trimmed per document, using the Arrow offsets.

    ``normalize_text`` (one string) uses ``str.translate`` with the same per-character mapping, and the
    reference function for strings that contain a capital sigma.

Shingle hashes
    Each distinct token gets a 64-bit blake2b hash; a shingle's hash is a polynomial combination of its
    token hashes modulo 2**64 followed by the murmur3 64-bit finalizer (a bijection), with the shingle's
    token count mixed in.  A shingle set is stored as the distinct shingle hashes in unsigned order (as
    signed int64).
    Two different shingles collide with probability about 2**-64, so the exact Jaccard of hash sets equals
    the Jaccard of string sets on any realistic corpus (tests compare both on random and real text).

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

import hashlib
import itertools
import threading
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from webdedup import reference
from webdedup.normalize import map_char, normalize_array

U64 = np.uint64
_FMIX_C1 = U64(0xFF51AFD7ED558CCD)
_FMIX_C2 = U64(0xC4CEB9FE1A85EC53)
_POLY = U64(0x9E3779B97F4A7C15)  # odd multiplier for polynomial combinations
_LEN_SALT = U64(0xD6E8FEB86659FD93)
_SET_SALT = U64(0xA0761D6478BD642F)
_SIGMA = "\u03a3"
_MINHASH_CHUNK = 32_768

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
# documents that take part in a candidate pair (models/intermediate/int_shingle_sets.py).
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
    shingle_size: int = reference.SHINGLE_SIZE
    num_hashes: int = reference.MINHASH_VALUES
    rows_per_band: int = reference.LSH_ROWS_PER_BAND
    seed: int = reference.MINHASH_SEED

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


def normalize_batch(bodies: pa.Array) -> pa.Array:
    """Normalize an Arrow string array (large_string result); nulls become empty strings."""
    return normalize_array(bodies)


# --------------------------------------------------------------------------------------------------
# Hashing helpers (wrapping uint64 arithmetic)


def fmix64(h: np.ndarray) -> np.ndarray:
    """murmur3's 64-bit finalizer: a bijection with full avalanche."""
    h = h ^ (h >> U64(33))
    h = h * _FMIX_C1
    h = h ^ (h >> U64(33))
    h = h * _FMIX_C2
    return h ^ (h >> U64(33))


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


def token_hashes(tokens: list[str]) -> np.ndarray:
    return np.fromiter(
        (
            int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little")
            for t in tokens
        ),
        dtype=U64,
        count=len(tokens),
    )


def _length_salt(length: int) -> np.uint64:
    return U64((length * int(_LEN_SALT)) & 0xFFFFFFFFFFFFFFFF)


def _poly_windows(values: np.ndarray, width: int) -> np.ndarray:
    """sum(values[i + j] * P**(width - 1 - j)) mod 2**64 for every full window start i."""
    n = len(values) - width + 1
    if n <= 0:
        return np.zeros(0, dtype=U64)
    acc = np.zeros(n, dtype=U64)
    for j in range(width):
        acc = acc * _POLY + values[j : j + n]
    return acc


# --------------------------------------------------------------------------------------------------
# The batch function


@dataclass
class _Shingled:
    doc_index: np.ndarray  # int64, one per distinct shingle, sorted by (doc, hash)
    hashes: np.ndarray  # uint64
    shingle_counts: np.ndarray  # int64 per document
    token_counts: np.ndarray  # int64 per document


def shingle_batch(normalized: pa.Array, shingle_size: int) -> _Shingled:
    """Distinct shingle hashes per document, sorted, for an array of normalized texts."""
    n_docs = len(normalized)
    nonempty = pc.if_else(pc.equal(normalized, ""), pa.scalar(None, pa.large_string()), normalized)
    token_lists = pc.split_pattern(nonempty, " ")
    token_counts = pc.fill_null(pc.list_value_length(token_lists), 0).to_numpy().astype(np.int64)
    flat = pc.list_flatten(token_lists)
    if len(flat):
        encoded = pc.dictionary_encode(flat)
        flat_hashes = token_hashes(encoded.dictionary.to_pylist())[encoded.indices.to_numpy()]
    else:
        flat_hashes = np.zeros(0, U64)

    starts = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(token_counts, out=starts[1:])
    k = shingle_size
    # Full windows: a window starting at flat position i is valid when it ends inside its document.
    doc_of_token = np.repeat(np.arange(n_docs, dtype=np.int64), token_counts)
    win = _poly_windows(flat_hashes, k)
    if len(win):
        ends = starts[1:][doc_of_token[: len(win)]]
        valid = np.arange(len(win)) + k <= ends
        full_doc = doc_of_token[: len(win)][valid]
        full_hash = fmix64(win[valid] ^ _length_salt(k))
    else:
        full_doc = np.zeros(0, np.int64)
        full_hash = np.zeros(0, U64)
    # Short documents (1 .. k-1 tokens): one shingle made of all their tokens.
    short_docs = np.flatnonzero((token_counts > 0) & (token_counts < k))
    short_hash = np.empty(len(short_docs), dtype=U64)
    for out_i, d in enumerate(short_docs):
        n = int(token_counts[d])
        combined = _poly_windows(flat_hashes[starts[d] : starts[d] + n], n)[0]
        short_hash[out_i] = fmix64(np.array([combined ^ _length_salt(n)], dtype=U64))[0]

    # Windows come out grouped by document; short documents contribute one shingle each.  Merge the two
    # into document order, then sort each document's segment (per-segment np.sort stays in cache and is
    # about 10x faster than a two-key lexsort over the batch) and drop repeats.
    doc_index = np.concatenate([full_doc, short_docs.astype(np.int64)])
    hashes = np.concatenate([full_hash, short_hash])
    if len(short_docs) and len(full_doc):
        order = np.argsort(doc_index, kind="stable")
        doc_index, hashes = doc_index[order], hashes[order]
    bounds = np.searchsorted(doc_index, np.arange(n_docs + 1))
    for d in np.flatnonzero(np.diff(bounds) > 1):
        hashes[bounds[d] : bounds[d + 1]].sort()
    keep = np.ones(len(hashes), dtype=bool)
    if len(hashes) > 1:
        keep[1:] = (hashes[1:] != hashes[:-1]) | (doc_index[1:] != doc_index[:-1])
    doc_index, hashes = doc_index[keep], hashes[keep]
    shingle_counts = np.bincount(doc_index, minlength=n_docs).astype(np.int64)
    return _Shingled(doc_index, hashes, shingle_counts, token_counts)


def minhash(shingled: _Shingled, params: FingerprintParams) -> np.ndarray:
    """(n_docs, num_hashes) uint64 minima; all-zero rows for documents without shingles."""
    n_docs = len(shingled.shingle_counts)
    sig = np.zeros((n_docs, params.num_hashes), dtype=U64)
    present = np.flatnonzero(shingled.shingle_counts > 0)
    if len(present) == 0:
        return sig
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(shingled.shingle_counts, out=offsets[1:])
    seg_starts = offsets[:-1][present]
    a, b = permutations(params.num_hashes, params.seed)
    x = shingled.hashes
    # Work in chunks of whole documents of about _MINHASH_CHUNK shingles, so each permutation pass runs
    # in cache with an in-place buffer (4x faster than full-batch passes).
    chunk_bounds = np.unique(np.searchsorted(seg_starts, np.arange(0, len(x), _MINHASH_CHUNK)))
    chunk_bounds = np.append(chunk_bounds, len(seg_starts))
    buffer = np.empty(min(len(x), 4 * _MINHASH_CHUNK), dtype=U64)
    for c0, c1 in itertools.pairwise(chunk_bounds.tolist()):
        if c0 == c1:
            continue
        s0 = seg_starts[c0]
        s1 = seg_starts[c1] if c1 < len(seg_starts) else len(x)
        values = x[s0:s1]
        tmp = buffer[: s1 - s0] if s1 - s0 <= len(buffer) else np.empty(s1 - s0, dtype=U64)
        local_starts = seg_starts[c0:c1] - s0
        rows = present[c0:c1]
        for i in range(params.num_hashes):
            np.multiply(values, a[i], out=tmp)
            tmp += b[i]
            sig[rows, i] = np.minimum.reduceat(tmp, local_starts)
    sig[present] >>= U64(1)
    return sig


def band_keys(signature: np.ndarray, rows_per_band: int) -> np.ndarray:
    """(n_docs, bands) non-negative int64 band keys."""
    n_docs, num_hashes = signature.shape
    bands = num_hashes // rows_per_band
    grouped = signature.reshape(n_docs, bands, rows_per_band)
    acc = np.broadcast_to(np.arange(bands, dtype=U64), (n_docs, bands)).copy()
    for j in range(rows_per_band):
        acc = acc * _POLY + grouped[:, :, j]
    return (fmix64(acc) >> U64(1)).astype(np.int64)


def set_keys(shingled: _Shingled) -> np.ndarray:
    """An order-independent 64-bit key of each document's shingle set (0 for the empty set)."""
    n_docs = len(shingled.shingle_counts)
    sums = np.zeros(n_docs, dtype=U64)
    np.add.at(sums, shingled.doc_index, fmix64(shingled.hashes ^ _SET_SALT))
    keys = fmix64(sums ^ (shingled.shingle_counts.astype(U64) * _LEN_SALT)).view(np.int64)
    keys[shingled.shingle_counts == 0] = 0
    return keys


def _list_array(values: np.ndarray, counts: np.ndarray, value_type: pa.DataType) -> pa.Array:
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, type=value_type))


def fingerprint_batch(batch: pa.RecordBatch, params: FingerprintParams) -> pa.RecordBatch:
    """Fingerprint a batch with columns doc_id and body; returns a batch of FINGERPRINT_SCHEMA."""
    doc_ids = batch.column("doc_id").cast(pa.string())
    shingled = shingle_batch(normalize_batch(batch.column("body")), params.shingle_size)
    signature = minhash(shingled, params)
    keys = band_keys(signature, params.rows_per_band)
    n_docs = len(doc_ids)
    return pa.RecordBatch.from_arrays(
        [
            doc_ids,
            pa.array(shingled.token_counts, type=pa.int32()),
            pa.array(shingled.shingle_counts, type=pa.int32()),
            pa.array(set_keys(shingled), type=pa.int64()),
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
    shingled = shingle_batch(normalize_batch(batch.column("body")), params.shingle_size)
    return pa.RecordBatch.from_arrays(
        [
            batch.column("doc_id").cast(pa.string()),
            pa.array(shingled.shingle_counts, type=pa.int32()),
            _list_array(shingled.hashes.view(np.int64), shingled.shingle_counts, pa.int64()),
        ],
        schema=SHINGLE_SET_SCHEMA,
    )


# --------------------------------------------------------------------------------------------------
# Streaming driver used by the dbt models


@dataclass(frozen=True)
class RunSettings:
    params: FingerprintParams
    batch_size: int = 2048
    workers: int = 2
    progress_every: int = 100_000


def settings_from_row(row: dict) -> RunSettings:
    """RunSettings from a row of the int_run_settings model."""
    params = FingerprintParams.from_strings(
        shingle_size=row["shingle_size"],
        num_hashes=row["num_hashes"],
        rows_per_band=row["rows_per_band"],
        seed=row["seed"],
    )
    return RunSettings(
        params=params, batch_size=int(row["batch_size"]), workers=int(row["fingerprint_workers"])
    )


def _log(label: str, message: str) -> None:
    print(f"[{label}] {message}", flush=True)


def carry_columns(result: pa.RecordBatch, source: pa.RecordBatch, names) -> pa.RecordBatch:
    """``result`` (one row per row of ``source``) with the ``source`` columns ``names`` appended."""
    for name in names:
        result = result.append_column(source.schema.field(name), source.column(name))
    return result


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def _worker_pool(workers: int):
    """A pool of ``workers`` processes that can import this package, started once per process and shared
    by every model of a dbt invocation (starting a pool costs about 2 s: it imports numpy and pyarrow).

    Processes, not threads: much of a batch is many short numpy/pyarrow calls that hold the GIL, so
    threads gave no speed-up on 2 cores.  ``spawn`` (not fork) keeps the children clear of the parent's
    DuckDB connection; PYTHONPATH carries the project root because dbt adds it to sys.path only.
    """
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None or getattr(pool, "_broken", False):
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            paths = [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
            os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
            pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
            _POOLS[workers] = pool
        return pool


def iter_batches(batches, settings: RunSettings, function=None, label: str = "fingerprints", carry=()):
    """Apply ``function(batch, settings.params)`` (default ``fingerprint_batch``) to an iterable of record
    batches (doc_id, body, ...), yielding the results in input order, each with the input columns named
    in ``carry`` appended unchanged.

    With ``settings.workers > 1`` batches go to that many worker processes; at most ``2 * workers``
    batches are in flight, so memory is bounded by the batch size, not by the corpus.  Progress
    (documents done, docs/s) is printed every ``progress_every`` documents.
    """
    import time
    from collections import deque

    function = function or fingerprint_batch
    started = time.monotonic()
    done = 0
    next_report = settings.progress_every

    def finish(result: pa.RecordBatch, source: pa.RecordBatch) -> pa.RecordBatch:
        nonlocal done, next_report
        result = carry_columns(result, source, carry)
        done += result.num_rows
        if done >= next_report:
            elapsed = time.monotonic() - started
            _log(label, f"{done:,} documents, {done / max(elapsed, 1e-9):,.0f} docs/s")
            next_report += settings.progress_every
        return result

    batches = iter(batches)
    head = list(itertools.islice(batches, 2))
    if len(head) < 2 or settings.workers <= 1:
        # a single batch (small inputs, the fixture) is not worth starting worker processes for
        for batch in itertools.chain(head, batches):
            yield finish(function(batch, settings.params), batch)
    else:
        pool = _worker_pool(settings.workers)
        pending: deque = deque()
        try:
            for batch in itertools.chain(head, batches):
                work = batch.select(["doc_id", "body"])
                pending.append((pool.submit(function, work, settings.params), batch))
                while len(pending) >= 2 * settings.workers:
                    future, source = pending.popleft()
                    yield finish(future.result(), source)
            while pending:
                future, source = pending.popleft()
                yield finish(future.result(), source)
        finally:
            for future, _ in pending:  # a failed or abandoned stream leaves no work behind
                future.cancel()
    elapsed = time.monotonic() - started
    _log(label, f"done: {done:,} documents in {elapsed:.1f} s ({done / max(elapsed, 1e-9):,.0f} docs/s)")


def _stream(reader: pa.RecordBatchReader, settings: RunSettings, function, schema: pa.Schema, label: str):
    carry = [name for name in reader.schema.names if name not in ("doc_id", "body")]
    for name in carry:
        schema = schema.append(reader.schema.field(name))
    return pa.RecordBatchReader.from_batches(schema, iter_batches(reader, settings, function, label, carry))


def stream_fingerprints(reader: pa.RecordBatchReader, settings: RunSettings) -> pa.RecordBatchReader:
    """Fingerprints (FINGERPRINT_SCHEMA) of a stream of (doc_id, body, ...) batches, as a stream; input
    columns other than doc_id and body (for example body_hash) are carried along unchanged."""
    return _stream(reader, settings, fingerprint_batch, FINGERPRINT_SCHEMA, "fingerprints")


def stream_shingle_sets(reader: pa.RecordBatchReader, settings: RunSettings) -> pa.RecordBatchReader:
    """Shingle sets (SHINGLE_SET_SCHEMA) of a stream of (doc_id, body, ...) batches, as a stream."""
    return _stream(reader, settings, shingle_set_batch, SHINGLE_SET_SCHEMA, "shingle sets")
