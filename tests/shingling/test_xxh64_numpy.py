"""shingling.xxh64_numpy: vectorized xxHash64 of 8-byte lanes equals the xxhash package."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.xxh64_numpy import xxh64_lanes

UINT64 = st.integers(min_value=0, max_value=2**64 - 1)


def reference(rows: list[list[int]], seed: int) -> list[int]:
    return [xxhash.xxh64_intdigest(struct.pack(f"<{len(r)}Q", *r), seed) for r in rows]


def as_lanes(rows: list[list[int]], n_lanes: int) -> list[np.ndarray]:
    return [np.array([r[j] for r in rows], dtype=np.uint64) for j in range(n_lanes)]


@settings(deadline=None)
@given(
    st.integers(min_value=1, max_value=17).flatmap(
        lambda n: st.lists(st.lists(UINT64, min_size=n, max_size=n), min_size=1, max_size=20)
    ),
    st.one_of(st.just(42), st.just(0), UINT64),
)
def test_equals_the_xxhash_package_for_any_lane_count(rows: list[list[int]], seed: int) -> None:
    n_lanes = len(rows[0])
    got = xxh64_lanes(as_lanes(rows, n_lanes), seed)
    assert got.dtype == np.uint64
    assert got.tolist() == reference(rows, seed)


@pytest.mark.parametrize("n_lanes", range(1, 10))
def test_extreme_lane_values(n_lanes: int) -> None:
    # zero, one and all-ones lanes exercise every carry of the 64-bit arithmetic
    rows = [[v] * n_lanes for v in (0, 1, 2**63, 2**64 - 1)] + [list(range(n_lanes))]
    assert xxh64_lanes(as_lanes(rows, n_lanes), 42).tolist() == reference(rows, 42)


def test_no_rows_give_no_hashes() -> None:
    assert xxh64_lanes([np.zeros(0, dtype=np.uint64)] * 4, 42).shape == (0,)


def test_no_lanes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one lane"):
        xxh64_lanes([], 42)
