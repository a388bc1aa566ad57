"""shingling.kernels: the compiled xxHash64 equals the xxhash package, for any input length."""

from __future__ import annotations

import struct

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.kernels import hash_bytes, hash_lanes

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
