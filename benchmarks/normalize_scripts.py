"""Normalization speed per writing system: `python benchmarks/normalize_scripts.py`.

Synthetic pages (50-400 words drawn from a 5,000-word vocabulary of one script: Greek with capital
sigmas, Cyrillic, Hangul syllables, CJK ideographs, Latin with accents) in the pipeline's 2,048-page
batches through ``normalize_array(..., tokens_only=True)`` as the fingerprint pass calls it; prints the
best of three passes per script after one warm-up batch, and checks the tokens of the first 300 pages
against the spec's ``normalize_text``.  To compare two commits, run it from a worktree of each.
"""

from __future__ import annotations

import random
import time

import pyarrow as pa

from webdedup.core import reference
from webdedup.core.normalize import normalize_array

SCRIPTS = {
    "greek": [chr(c) for c in range(0x391, 0x3AA) if c != 0x3A2] + [chr(c) for c in range(0x3B1, 0x3CA)],
    "cyrillic": [chr(c) for c in range(0x410, 0x450)],
    "hangul": [chr(c) for c in range(0xAC00, 0xAC00 + 2000)],
    "cjk": [chr(c) for c in range(0x4E00, 0x4E00 + 3000)],
    "latin-accents": list("abcdefghijklmnopqrstuvwxyzéèàçüöäßñ"),
}
PAGES, BATCH = 8192, 2048


def main() -> None:
    rng = random.Random(3)
    for name, alphabet in SCRIPTS.items():
        vocabulary = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 9))) for _ in range(5000)]
        pages = [" ".join(rng.choices(vocabulary, k=rng.randint(50, 400))) + "." for _ in range(PAGES)]
        batches = [pa.array(pages[i : i + BATCH]) for i in range(0, PAGES, BATCH)]
        normalize_array(batches[0], tokens_only=True)
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            results = [normalize_array(batch, tokens_only=True) for batch in batches]
            best = min(best, time.perf_counter() - start)
        tokens = [text.split() for text in results[0].to_pylist()[:300]]
        assert tokens == [reference.normalize_text(page).split() for page in pages[:300]], name
        megabytes = sum(len(page.encode()) for page in pages) / 1e6
        print(f"{name:14s} {megabytes:6.1f} MB  {best:6.3f} s  {megabytes / best:6.1f} MB/s")


if __name__ == "__main__":
    main()
