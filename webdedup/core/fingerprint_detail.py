"""The readable detail of fingerprinted.parquet (var ``fingerprint_detail: full``): each document's
normalized text and its shingles as text, as the specification's fingerprinted output lists them.

Off by default: both are a pure function of the body (together about 9 KB per web page), and the
pipeline itself works on shingle hashes (webdedup/core/fingerprint.py).  The text is
``webdedup.core.fingerprint.normalize_batch`` (exactly the spec's ``normalize_text``), the tokens are its
space-separated words and the shingles follow the spec's ``token_shingles``: every window of
``shingle_size`` tokens, or the whole document as one shingle when it has fewer tokens, none when it
is empty.  A document's shingles are stored once each, sorted.
"""

from __future__ import annotations

import pyarrow as pa

from webdedup.core.fingerprint import FingerprintParams, normalize_batch

DETAIL_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("normalized_text", pa.large_string(), nullable=False),
        pa.field("shingles", pa.list_(pa.large_string()), nullable=False),
    ]
)


def shingles(tokens: list[str], size: int) -> list[str]:
    """The distinct shingles of a token list, sorted."""
    if len(tokens) < size:
        return [" ".join(tokens)] if tokens else []
    return sorted({" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)})


def detail_batch(batch: pa.RecordBatch, params: FingerprintParams) -> pa.RecordBatch:
    """doc_id, normalized_text and shingles of a batch with columns doc_id and body."""
    texts = normalize_batch(batch.column("body")).to_pylist()
    return pa.RecordBatch.from_arrays(
        [
            batch.column("doc_id").cast(pa.string()),
            pa.array(texts, pa.large_string()),
            pa.array(
                [shingles(text.split(" ") if text else [], params.shingle_size) for text in texts],
                pa.list_(pa.large_string()),
            ),
        ],
        schema=DETAIL_SCHEMA,
    )
