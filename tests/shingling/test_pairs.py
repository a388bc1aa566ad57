"""The pair rules of shingling.pairs: their meaning, and the compiled and probe paths equal them."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from shingling import pairs
from shingling.fast.estimators import min_shared as compiled_min_shared
from shingling.fast.probe import min_shared as probe_min_shared
from shingling.schema import A_IN_B, B_IN_A, NEAR_DUPLICATE

THRESHOLDS = [0.0, 0.05, 0.1, 0.3, 0.35, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0]


def test_min_shared_is_the_fewest_matches_whose_share_reaches_the_threshold() -> None:
    # exact rational arithmetic: the smallest m >= 1 with m / size >= threshold
    for size in range(1, 257):
        for t in THRESHOLDS:
            want = max(1, math.ceil(Fraction(str(t)) * size))
            assert pairs.min_shared(size, t) == want, (size, t)


def test_prefix_filter_is_lossless_on_every_pair_of_small_sets() -> None:
    # two sorted sets of `size` sharing at least min_shared(size) elements share one of their first
    # prefix_length(size) elements
    rng = np.random.default_rng(7)
    for _ in range(2000):
        size = int(rng.integers(1, 12))
        t = float(rng.choice(THRESHOLDS[1:]))
        a = np.sort(rng.choice(40, size, replace=False))
        b = np.sort(rng.choice(40, size, replace=False))
        if len(np.intersect1d(a, b)) >= pairs.min_shared(size, t):
            p = pairs.prefix_length(size, t)
            assert np.intersect1d(a[:p], b[:p]).size > 0


@given(st.integers(0, 10_000), st.sampled_from(THRESHOLDS))
def test_compiled_and_probe_rules_are_the_reference(size: int, t: float) -> None:
    assert compiled_min_shared(size, t) == pairs.min_shared(size, t)
    assert probe_min_shared(np.array([size]), t).tolist() == [pairs.min_shared(size, t)]


def test_relation() -> None:
    r = pairs.relation
    assert r(0.5, 0.0, 0.0, threshold=0.5, containment_threshold=None) == NEAR_DUPLICATE
    assert r(0.49, 1.0, 1.0, threshold=0.5, containment_threshold=None) is None
    assert r(0.2, 0.9, 0.1, threshold=0.5, containment_threshold=0.8) == A_IN_B
    assert r(0.2, 0.1, 0.9, threshold=0.5, containment_threshold=0.8) == B_IN_A
    assert r(0.2, 0.85, 0.9, threshold=0.5, containment_threshold=0.8) == B_IN_A
    assert r(0.2, 0.7, 0.7, threshold=0.5, containment_threshold=0.8) is None
    assert pairs.flipped(A_IN_B) == B_IN_A and pairs.flipped(NEAR_DUPLICATE) == NEAR_DUPLICATE


def test_candidate_threshold() -> None:
    assert pairs.candidate_threshold(0.5, 0.2) == 0.3
    assert pairs.candidate_threshold(0.1, 0.2) == pairs.CANDIDATE_FLOOR


def test_sizes_may_reach_is_a_bound_on_the_exact_jaccard() -> None:
    # every pair of small sets: a Jaccard at the threshold implies the sizes pass
    rng = np.random.default_rng(11)
    for _ in range(3000):
        a = set(rng.choice(30, int(rng.integers(1, 30)), replace=False).tolist())
        b = set(rng.choice(30, int(rng.integers(1, 30)), replace=False).tolist())
        j = len(a & b) / len(a | b)
        for t in THRESHOLDS:
            if j >= t:
                assert pairs.sizes_may_reach(len(a), len(b), t), (len(a), len(b), t)
