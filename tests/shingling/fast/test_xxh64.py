"""shingling.fast.xxh64: the compiled xxHash64 equals the xxhash package, for any input length."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from shingling.fast.xxh64 import xxh64_bytes, xxh64_lanes


@njit
def _hash_bytes(data: Any, seed: Any) -> Any:
    return xxh64_bytes(data, 0, len(data), seed)


@njit
def _hash_lanes(lanes: Any, seed: Any) -> Any:
    return xxh64_lanes(lanes, 0, len(lanes), seed)


def hash_bytes(data: bytes, seed: int) -> int:
    return int(_hash_bytes(np.frombuffer(data, dtype=np.uint8), np.uint64(seed)))


def hash_lanes(lanes: list[int], seed: int) -> int:
    return int(_hash_lanes(np.array(lanes, dtype=np.uint64), np.uint64(seed)))


UINT64 = st.integers(min_value=0, max_value=2**64 - 1)
SEEDS = st.one_of(st.just(42), st.just(0), UINT64)


@settings(deadline=None, max_examples=300)
@given(st.binary(max_size=200), SEEDS)
def test_bytes_equal_the_xxhash_package(data: bytes, seed: int) -> None:
    # lengths 0 to 200 take every path: the 32-byte stripes, the 8-, 4- and 1-byte tails
    assert hash_bytes(data, seed) == xxhash.xxh64_intdigest(data, seed)


@settings(deadline=None, max_examples=300)
@given(st.lists(UINT64, max_size=17), SEEDS)
def test_lanes_equal_the_xxhash_package(lanes: list[int], seed: int) -> None:
    packed = struct.pack(f"<{len(lanes)}Q", *lanes)
    assert hash_lanes(lanes, seed) == xxhash.xxh64_intdigest(packed, seed)


@pytest.mark.parametrize("n", range(0, 10))
def test_extreme_values(n: int) -> None:
    # zero, one and all-ones inputs exercise every carry of the 64-bit arithmetic
    for v in (0, 1, 2**63, 2**64 - 1):
        packed = struct.pack(f"<{n}Q", *([v] * n))
        assert hash_lanes([v] * n, 42) == xxhash.xxh64_intdigest(packed, 42)
        assert hash_bytes(packed, 2**64 - 1) == xxhash.xxh64_intdigest(packed, 2**64 - 1)
