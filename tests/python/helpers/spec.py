"""The specification's result table for its 24-document fixture (web-text-deduplication.txt, "Run the
default corpus"), the one place the tests read it from."""

from __future__ import annotations

SPEC_RESULT = {
    "documents": 24,
    "possible_pairs": 276,
    "candidate_pairs": 18,
    "cross_domain_candidates": 18,
    "accepted_edges": 18,
    "exact_duplicate_edges": 6,
    "near_duplicate_edges": 12,
    "duplicate_clusters": 6,
    "singleton_clusters": 6,
    "representatives": 12,
}
SPEC_CANDIDATE_REDUCTION_PCT = 93.48
