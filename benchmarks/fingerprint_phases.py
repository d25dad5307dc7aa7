"""The fingerprint pass phase by phase: `python benchmarks/fingerprint_phases.py CORPUS`.

Reads the first ``--docs`` pages of a Parquet corpus (the generator's or `prose_corpus.py`'s columns) and
runs them through the kernels of webdedup/core/fingerprint.py in the pipeline's batches (``--batch``, the
`batch_size` var's default) on one thread: normalization, token hashes (the token table and BLAKE2b), the
distinct shingles, MinHash and the band keys.  Prints each phase's best of ``--rounds`` passes (the first
pass compiles nothing: `python -m webdedup.core.warm` has), with the tokens and the distinct tokens per
batch that the token table holds.  To compare two commits, run it from a worktree of each, in turn.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from webdedup.core import fingerprint, kernels

PHASES = ("normalize", "tokens", "shingles", "minhash", "band keys")


def phase_seconds(bodies: list[pa.Array], params: fingerprint.FingerprintParams) -> dict:
    """Seconds per phase over the batches ``bodies``, and the token counts."""
    seconds = dict.fromkeys(PHASES, 0.0)
    tokens = distinct = 0
    a, b = fingerprint.permutations(params.num_hashes, params.seed)
    for batch in bodies:
        started = time.perf_counter()
        text = fingerprint.normalize_batch(batch, tokens_only=True).cast(pa.large_string())
        _, offsets, data = text.buffers()
        offsets = np.frombuffer(offsets, dtype=np.int64, count=len(text) + 1, offset=8 * text.offset)
        data = np.frombuffer(data if data is not None else b"", dtype=np.uint8)
        marks = [started, time.perf_counter()]
        token_hash, token_counts = kernels.token_hashes(data, offsets)
        marks.append(time.perf_counter())
        hashes, shingle_counts, _ = kernels.distinct_shingles(token_hash, token_counts, params.shingle_size)
        marks.append(time.perf_counter())
        signature = kernels.minhash(hashes, shingle_counts, a, b)
        marks.append(time.perf_counter())
        kernels.band_keys(signature, params.rows_per_band)
        marks.append(time.perf_counter())
        for name, begin, end in zip(PHASES, marks[:-1], marks[1:], strict=True):
            seconds[name] += end - begin
        tokens += len(token_hash)
        distinct += len(np.unique(token_hash))
    return {"seconds": seconds, "tokens": tokens, "distinct_per_batch": distinct / max(len(bodies), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", help="a Parquet file with a body column")
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    table = pq.ParquetFile(args.corpus).iter_batches(batch_size=args.docs, columns=["body"])
    column = next(table).column("body")
    bodies = [column.slice(start, args.batch) for start in range(0, len(column), args.batch)]
    params = fingerprint.FingerprintParams.spec()
    best: dict = {}
    for _ in range(args.rounds):
        result = phase_seconds(bodies, params)
        for name, value in result["seconds"].items():
            best[name] = min(best.get(name, value), value)
    megabytes = pc.sum(pc.binary_length(column)).as_py() / 1e6
    print(
        f"{len(column):,} pages, {megabytes:,.0f} MB, batches of {args.batch:,}: {result['tokens']:,} tokens,"
        f" {result['distinct_per_batch']:,.0f} distinct tokens per batch; best of {args.rounds}, one thread"
    )
    for name in PHASES:
        print(f"  {name:<10} {best[name]:7.3f} s  {megabytes / max(best[name], 1e-9):8,.0f} MB/s")
    print(f"  {'all':<10} {sum(best.values()):7.3f} s")


if __name__ == "__main__":
    main()
