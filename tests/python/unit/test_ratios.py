"""Exact means of integer ratios (webdedup/core/ratios.py): the same double whatever the order."""

from __future__ import annotations

import itertools
import random
from decimal import Decimal, getcontext

import pytest

from webdedup.core.ratios import mean_of_ratios


def decimal_mean(pairs) -> float:
    """An independent computation: the mean in 80-digit decimal arithmetic, then the nearest double."""
    getcontext().prec = 80
    total = sum((Decimal(n) / Decimal(d) if d else Decimal(0)) for n, d in pairs)
    return float(total / len(pairs))


def test_small_means_by_hand():
    assert mean_of_ratios([[1, 3], [2, 3]]) == 0.5
    assert mean_of_ratios([[1, 3]] * 3) == 1 / 3
    assert mean_of_ratios([[7, 10], [1, 1]]) == 0.85
    assert mean_of_ratios([[0, 0], [1, 1]]) == 0.5  # two empty sets score 0.0
    assert mean_of_ratios([]) is None
    assert mean_of_ratios(None) is None


def test_a_null_part_is_an_error_naming_the_ratio():
    with pytest.raises(ValueError, match=r"null or missing part: \[1, None\]"):
        mean_of_ratios([[1, 2], [1, None]])


def test_the_mean_does_not_depend_on_the_order_where_a_float_sum_does():
    rng = random.Random(7)
    pairs = [[rng.randint(700, 1000), rng.randint(1000, 1400)] for _ in range(9)]
    float_means = set()
    exact_means = set()
    for order in itertools.islice(itertools.permutations(pairs), 2000):
        float_means.add(sum(n / d for n, d in order) / len(order))
        exact_means.add(mean_of_ratios(list(order)))
    assert len(float_means) > 1  # summation order changes the last bits of a float sum
    assert exact_means == {decimal_mean(pairs)}


def test_agrees_with_decimal_arithmetic_on_random_jaccard_lists():
    rng = random.Random(3)
    for _ in range(300):
        pairs = []
        for _ in range(rng.randint(1, 60)):
            union = rng.randint(1, 5000)
            pairs.append([rng.randint(0, union), union])
        assert mean_of_ratios(pairs) == decimal_mean(pairs)


def test_grouped_entries_give_the_mean_of_the_ratios_they_stand_for():
    """[numerator_sum, denominator, count] stands for count ratios of that denominator: the same mean as
    the ratios listed one by one (what SQL hands over after grouping a cluster's edges by union size)."""
    rng = random.Random(11)
    for _ in range(200):
        pairs = [[rng.randint(0, 40), rng.choice([40, 41, 57])] for _ in range(rng.randint(1, 50))]
        grouped = {}
        for numerator, denominator in pairs:
            total, count = grouped.get(denominator, (0, 0))
            grouped[denominator] = (total + numerator, count + 1)
        entries = [[total, denominator, count] for denominator, (total, count) in grouped.items()]
        assert mean_of_ratios(entries) == decimal_mean(pairs)
    assert mean_of_ratios([[0, 0, 3], [2, 2, 1]]) == 0.25  # empty sets score 0.0, counted three times
    with pytest.raises(ValueError, match="negative count"):
        mean_of_ratios([[1, 2, -1]])
    with pytest.raises(ValueError, match="null or missing part"):
        mean_of_ratios([[1]])
