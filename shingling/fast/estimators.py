"""A pair's scores from two sketches, compiled: :mod:`shingling.estimators` and the pair rules of
:mod:`shingling.pairs` in numba, inlined into the loops that meet pairs (:mod:`shingling.fast.postings`,
:mod:`shingling.fast.probe`) and run by :func:`score_rows` for pairs met elsewhere.

A sketch is a sorted run of a values array (row i: ``values[offsets[i]:offsets[i + 1]]``, its
bottom-k part the first ``k``). The rules themselves (:func:`shingling.pairs.min_shared`,
:func:`shingling.pairs.relation_code`, :func:`shingling.pairs.sizes_may_reach`) are compiled
from the reference's own functions; the
estimates are the reference's arithmetic on sorted runs, tested equal pair by pair
(tests/shingling/fast/test_postings.py: pairs scored, and ``may_reach`` on real and random
sketches; tests/shingling/test_pairs.py: ``min_shared``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from shingling import pairs
from shingling.fast.compiled import Compiled

# the reference rules themselves, compiled
min_shared = njit(inline="always")(pairs.min_shared)
relation_code = njit(inline="always")(pairs.relation_code)
sizes_may_reach = njit(inline="always")(pairs.sizes_may_reach)


@njit(inline="always")
def count_shared(va: Any, a0: int, a1: int, vb: Any, b0: int, b1: int) -> int:
    """How many values the sorted runs ``va[a0:a1]`` and ``vb[b0:b1]`` share."""
    n = 0
    while a0 < a1 and b0 < b1:  # without branches: which side advances is unpredictable
        x, y = va[a0], vb[b0]
        n += x == y
        a0 += x <= y
        b0 += y <= x
    return n


@njit(inline="always")
def shares_enough(va: Any, a0: int, a1: int, vb: Any, b0: int, b1: int, need: int) -> bool:
    """Whether the sorted runs ``va[a0:a1]`` and ``vb[b0:b1]`` share at least ``need`` values;
    stops as soon as the values left cannot make up the difference (most pairs tested share one
    hash and little else, and are told apart within a few steps)."""
    n = 0
    while a0 < a1 and b0 < b1:
        if n + min(a1 - a0, b1 - b0) < need:
            return False
        x, y = va[a0], vb[b0]
        n += x == y
        a0 += x <= y
        b0 += y <= x
    return n >= need


@njit(inline="always")
def shared_in_sample(va: Any, a0: int, a1: int, vb: Any, b0: int, b1: int, size: int) -> int:
    """Of the first ``size`` values of the sorted union of two sorted runs, how many are in both."""
    n = 0
    taken = 0
    while taken < size and (a0 < a1 or b0 < b1):
        if b0 >= b1 or (a0 < a1 and va[a0] < vb[b0]):
            a0 += 1
        elif a0 >= a1 or vb[b0] < va[a0]:
            b0 += 1
        else:
            n += 1
            a0 += 1
            b0 += 1
        taken += 1
    return n


@njit(inline="always")
def known_end(values: Any, s0: int, s1: int, bound: Any, bounded: bool) -> int:
    """The end of the run ``values[s0:s1]`` cut at ``bound`` (inclusive) when ``bounded``."""
    if not bounded:
        return s1
    e = s0
    while e < s1 and values[e] <= bound:
        e += 1
    return e


@njit(inline="always")
def may_reach(va: Any, oa: Any, a: int, vb: Any, ob: Any, b: int, k: int, threshold: float) -> bool:
    """:func:`shingling.pairs.may_reach` of rows a and b (equal: tests/shingling/fast)."""
    a0, b0 = oa[a], ob[b]
    ka1, kb1 = min(oa[a + 1], a0 + k), min(ob[b + 1], b0 + k)
    need = min_shared(min(k, max(ka1 - a0, kb1 - b0)), threshold)
    return shares_enough(va, a0, ka1, vb, b0, kb1, need)


@njit(inline="always")
def score_pair(
    va: Any,
    oa: Any,
    na: Any,
    a: int,
    vb: Any,
    ob: Any,
    nb: Any,
    b: int,
    k: int,
    threshold: float,
    containment_threshold: float,
    test_first: bool,
) -> tuple[bool, int, float, float, float, int]:
    """One pair's scores (as :func:`shingling.fast.postings.score_postings` gives them); first
    False when the test dropped it.

    Row ``a``'s sketch is ``va[oa[a]:oa[a + 1]]`` and its shingle count ``na[a]``; row ``b``'s
    likewise in ``vb``, ``ob``, ``nb`` (the same arrays when both rows are of one table).
    """
    a0, a1, b0, b1 = oa[a], oa[a + 1], ob[b], ob[b + 1]
    ka1, kb1 = min(a1, a0 + k), min(b1, b0 + k)
    if test_first and not may_reach(va, oa, a, vb, ob, b, k, threshold):
        return False, 0, 0.0, 0.0, 0.0, 0
    both = count_shared(va, a0, ka1, vb, b0, kb1)
    size = ka1 - a0 + kb1 - b0 - both  # the union of the bottom-k parts
    if not (na[a] <= k and nb[b] <= k):
        size = min(size, k)
    jac = shared_in_sample(va, a0, ka1, vb, b0, kb1, size) / size
    partial_a = a1 - a0 < na[a]
    partial_b = b1 - b0 < nb[b]
    if partial_a and partial_b:
        bound = min(va[a1 - 1], vb[b1 - 1])
    elif partial_a:
        bound = va[a1 - 1]
    else:
        bound = vb[b1 - 1]
    ea = known_end(va, a0, a1, bound, partial_a or partial_b)
    eb = known_end(vb, b0, b1, bound, partial_a or partial_b)
    known = count_shared(va, a0, ea, vb, b0, eb)
    ca = known / (ea - a0) if ea > a0 else 0.0
    cb = known / (eb - b0) if eb > b0 else 0.0
    return True, both, jac, ca, cb, relation_code(jac, ca, cb, threshold, containment_threshold)


def _score_rows(
    va: Any,
    oa: Any,
    na: Any,
    vb: Any,
    ob: Any,
    nb: Any,
    k: int,
    threshold: float,
    containment_threshold: float,
) -> tuple[Any, Any, Any, Any, Any]:
    """Row i of side a scored against row i of side b (:func:`score_pair`, untested), for every i.

    Returns:
        Per row: matches, jaccard, containment_a, containment_b, relation (as
        :func:`shingling.fast.postings.score_postings` gives them).
    """
    n = len(na)
    matches = np.empty(n, dtype=np.int32)
    jaccard = np.empty(n, dtype=np.float64)
    cont_a = np.empty(n, dtype=np.float64)
    cont_b = np.empty(n, dtype=np.float64)
    relation = np.empty(n, dtype=np.int8)
    for i in range(n):
        _, both, jac, ca, cb, rel = score_pair(
            va, oa, na, i, vb, ob, nb, i, k, threshold, containment_threshold, False
        )
        matches[i], jaccard[i], cont_a[i], cont_b[i], relation[i] = both, jac, ca, cb, rel
    return matches, jaccard, cont_a, cont_b, relation


score_rows = Compiled(_score_rows)
