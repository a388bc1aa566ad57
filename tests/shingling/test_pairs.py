"""The pair rules of shingling.pairs: their meaning, and the compiled and probe paths equal them."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from testdata import library_row, sample_corpus

from shingling import pairs, schema
from shingling.fast.estimators import min_shared as compiled_min_shared
from shingling.fast.probe import min_shared as probe_min_shared
from shingling.schema import A_IN_B, B_IN_A, NEAR_DUPLICATE, SHINGLES_A, SHINGLES_B

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


# --- derived columns: a new pair column is its name, its type and its definition -----------------

SIZE_RATIO = "size_ratio"  # an example column: min(|A|, |B|) / max(|A|, |B|)


def size_ratio(batch: pa.RecordBatch) -> pa.Array:
    a, b = batch.column(SHINGLES_A), batch.column(SHINGLES_B)
    return pc.divide(pc.cast(pc.min_element_wise(a, b), pa.float64()), pc.max_element_wise(a, b))


def add_size_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adds the example column as a newcomer would: in shingling.schema and shingling.pairs."""
    monkeypatch.setattr(schema, "PAIR_COLUMNS", (*schema.MEASURED_PAIR_COLUMNS, SIZE_RATIO))
    monkeypatch.setitem(schema.COLUMN_TYPES, SIZE_RATIO, pa.float64())
    monkeypatch.setitem(pairs.DERIVED, SIZE_RATIO, size_ratio)


def test_the_pair_table_has_no_derived_column_without_a_definition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert pairs.derived_columns() == tuple(
        c for c in schema.PAIR_COLUMNS if c not in schema.MEASURED_PAIR_COLUMNS
    )
    monkeypatch.setattr(schema, "PAIR_COLUMNS", (*schema.MEASURED_PAIR_COLUMNS, SIZE_RATIO))
    monkeypatch.setitem(schema.COLUMN_TYPES, SIZE_RATIO, pa.float64())
    with pytest.raises(KeyError, match=SIZE_RATIO):
        pairs.derived_columns()


def test_a_column_added_to_the_schema_and_pairs_is_in_the_reference_pair_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the sample's first 120 documents: 75 pairs (the reference compares every pair in Python)
    rows = {d: library_row(text, 4, 20) for d, text in sample_corpus()[:120]}
    before = pairs.reference_pairs(rows, threshold=0.5, max_exact_group=3)
    add_size_ratio(monkeypatch)
    after = pairs.reference_pairs(rows, threshold=0.5, max_exact_group=3)
    assert len(before) > 20 and len(after) == len(before)
    n = len(schema.MEASURED_PAIR_COLUMNS)
    sizes = {(r[0], r[1]): (r[7], r[8]) for r in before}
    for row_before, row_after in zip(before, after, strict=True):
        assert row_after[:n] == row_before  # the measured columns unchanged
        a, b = sizes[(row_before[0], row_before[1])]
        assert row_after[n] == min(a, b) / max(a, b)
    assert any(r[n] < 1.0 for r in after)  # pairs of different sizes among them
