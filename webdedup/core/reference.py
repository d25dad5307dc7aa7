"""The specification's reference functions, kept verbatim as the independent oracle.

These are the functions printed in ``shared/spec/web-text-deduplication.txt`` (sections 1, 2 and 4).
They are deliberately slow (one blake2b call per shingle and seed) and are used only by tests and by the
benchmark's correctness checks, never by the pipeline itself.  ``jaccard`` and ``signature_overlap`` are
not printed in the spec; they follow its prose: exact set Jaccard (0.0 when both sets are empty) and the
fraction of equal signature coordinates.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

SHINGLE_SIZE = 5
MINHASH_VALUES = 64
MINHASH_SEED = 42
LSH_ROWS_PER_BAND = 8
SHINGLE_JACCARD_THRESHOLD = 0.7


def normalize_text(value: str) -> str:
    text = unicodedata.normalize("NFD", value or "")
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.lower()
    text = re.sub(r"[^\w\s]+", " ", text, flags=re.UNICODE)
    text = text.replace("_", " ")
    return " ".join(text.split())


def token_shingles(tokens: list[str], *, size: int = SHINGLE_SIZE) -> set[str]:
    if not tokens:
        return set()
    if len(tokens) < size:
        return {" ".join(tokens)}
    return {" ".join(tokens[idx : idx + size]) for idx in range(len(tokens) - size + 1)}


def hash_int(value: str, *, seed: int) -> int:
    digest = hashlib.blake2b(f"{seed}:{value}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def minhash_signature(
    values: set[str],
    *,
    hashes: int = MINHASH_VALUES,
    seed: int = MINHASH_SEED,
) -> list[int]:
    if not values:
        return [0] * hashes
    return [min(hash_int(value, seed=seed + hash_index) for value in values) for hash_index in range(hashes)]


def lsh_band_keys(signature: list[int], *, rows_per_band: int = LSH_ROWS_PER_BAND) -> list[str]:
    if rows_per_band <= 0 or len(signature) % rows_per_band != 0:
        raise ValueError("signature length must be divisible by rows_per_band")

    keys: list[str] = []
    for offset in range(0, len(signature), rows_per_band):
        band_index = offset // rows_per_band
        band_values = signature[offset : offset + rows_per_band]
        payload = f"{band_index}:" + ",".join(str(value) for value in band_values)
        digest = hashlib.blake2b(payload.encode("utf-8"), digest_size=8).hexdigest()
        keys.append(f"{band_index:03d}:{digest}")
    return keys


def jaccard(left: set, right: set) -> float:
    union = len(left | right)
    return len(left & right) / union if union else 0.0


def signature_overlap(left: list[int], right: list[int]) -> float:
    if not left:
        return 0.0
    return sum(1 for a, b in zip(left, right) if a == b) / len(left)
