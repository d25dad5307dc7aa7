"""Exact means of ratios, the same double on every engine.

A mean of doubles summed in SQL depends on the summation order, which differs between engines and
between runs of one parallel engine.  The ratios the outputs average are ratios of integers (exact
Jaccard: shared / union shingles), so the mean is computed exactly on those integers and rounded once
to the nearest double: the result depends on the multiset of ratios only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from fractions import Fraction


def mean_of_ratios(pairs: Iterable[Sequence[int] | None] | None) -> float | None:
    """The mean of numerator / denominator over ``pairs`` ([numerator, denominator] each), correctly
    rounded to a double; a ratio with denominator 0 counts as 0.0 (as exact Jaccard scores two empty
    sets).  None for no pairs.  Pairs are grouped by denominator first, so a cluster with many edges
    sums few fractions."""
    if pairs is None:
        return None
    numerators: dict[int, int] = defaultdict(int)
    count = 0
    for pair in pairs:
        if pair is None or pair[0] is None or pair[1] is None:
            raise ValueError(f"mean_of_ratios: a ratio with a null part: {pair!r}")
        numerator, denominator = int(pair[0]), int(pair[1])
        count += 1
        if denominator:
            numerators[denominator] += numerator
    if not count:
        return None
    total = sum((Fraction(n, d) for d, n in numerators.items()), Fraction(0))
    return float(total / count)  # int / int in Python: correctly rounded
