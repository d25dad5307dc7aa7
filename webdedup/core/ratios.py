"""Exact means of ratios, the same double on every engine.

A mean of doubles summed in SQL depends on the summation order, which differs between engines and
between runs of one parallel engine.  The ratios the outputs average are ratios of integers (exact
Jaccard: shared / union shingles), so the mean is computed exactly on those integers and rounded once
to the nearest double: the result depends on the multiset of ratios only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence


def mean_of_ratios(pairs: Iterable[Sequence[int] | None] | None) -> float | None:
    """The mean of numerator / denominator over ``pairs``, correctly rounded to a double; a ratio with
    denominator 0 counts as 0.0 (as exact Jaccard scores two empty sets).  None for no ratios.

    Each entry is [numerator, denominator] (one ratio) or [numerator_sum, denominator, count]: ``count``
    ratios with that denominator whose numerators sum to ``numerator_sum``, so that SQL can group a
    cluster's millions of edges by denominator before the list reaches Python (the mean is the same)."""
    if pairs is None:
        return None
    numerators: dict[int, int] = defaultdict(int)
    count = 0
    for pair in pairs:
        if pair is None or len(pair) not in (2, 3) or any(part is None for part in pair):
            raise ValueError(f"mean_of_ratios: a ratio with a null or missing part: {pair!r}")
        numerator, denominator = int(pair[0]), int(pair[1])
        weight = int(pair[2]) if len(pair) == 3 else 1
        if weight < 0:
            raise ValueError(f"mean_of_ratios: a negative count: {pair!r}")
        count += weight
        if denominator:
            numerators[denominator] += numerator
    if not count:
        return None
    # the sum over one common denominator (the least common multiple): integers only, five times faster
    # than adding Fractions, which reduce after every step
    common = math.lcm(*numerators)
    total = sum(numerator * (common // denominator) for denominator, numerator in numerators.items())
    return total / (common * count)  # int / int in Python: correctly rounded
