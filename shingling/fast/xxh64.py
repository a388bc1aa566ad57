"""xxHash64, compiled: the hash of :mod:`shingling.hashing` (the ``xxhash`` package) in numba.

It follows the XXH64 specification (v0.1.1): :func:`xxh64_bytes` hashes a run of bytes (a word),
:func:`xxh64_lanes` a run of unsigned 64-bit integers as little-endian 8-byte lanes (a shingle: its
words' hashes), both inlined into the loops that call them. tests/shingling/fast/test_xxh64.py
checks both against the ``xxhash`` package bit for bit.
"""

from __future__ import annotations

from typing import Any

from numba import njit

from shingling.fast.compiled import U64

P1 = U64(11400714785074694791)
P2 = U64(14029467366897019727)
P3 = U64(1609587929392839161)
P4 = U64(9650029242287828579)
P5 = U64(2870177450012600261)


@njit(inline="always")
def _rotl(x: Any, r: int) -> Any:
    return (x << U64(r)) | (x >> U64(64 - r))


@njit(inline="always")
def _round(acc: Any, lane: Any) -> Any:
    acc = acc + lane * P2
    return _rotl(acc, 31) * P1


@njit(inline="always")
def _merge(h: Any, v: Any) -> Any:
    h = h ^ _round(U64(0), v)
    return h * P1 + P4


@njit(inline="always")
def _avalanche(h: Any) -> Any:
    h = h ^ (h >> U64(33))
    h = h * P2
    h = h ^ (h >> U64(29))
    h = h * P3
    return h ^ (h >> U64(32))


@njit(inline="always")
def _read(data: Any, p: int, n: int) -> Any:
    """The little-endian unsigned integer of ``n`` bytes at ``data[p]``."""
    v = U64(0)
    for j in range(n):
        v |= U64(data[p + j]) << U64(8 * j)
    return v


@njit(inline="always")
def _stripes(v1: Any, v2: Any, v3: Any, v4: Any) -> Any:
    h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
    h = _merge(h, v1)
    h = _merge(h, v2)
    h = _merge(h, v3)
    return _merge(h, v4)


@njit(inline="always")
def xxh64_bytes(data: Any, start: int, end: int, seed: Any) -> Any:
    """xxHash64 (unsigned) of ``data[start:end]``, a uint8 array."""
    p = start
    if end - start >= 32:
        v1 = seed + P1 + P2
        v2 = seed + P2
        v3 = seed
        v4 = seed - P1
        while p + 32 <= end:
            v1 = _round(v1, _read(data, p, 8))
            v2 = _round(v2, _read(data, p + 8, 8))
            v3 = _round(v3, _read(data, p + 16, 8))
            v4 = _round(v4, _read(data, p + 24, 8))
            p += 32
        h = _stripes(v1, v2, v3, v4)
    else:
        h = seed + P5
    h = h + U64(end - start)
    while p + 8 <= end:
        h = h ^ _round(U64(0), _read(data, p, 8))
        h = _rotl(h, 27) * P1 + P4
        p += 8
    if p + 4 <= end:
        h = h ^ (_read(data, p, 4) * P1)
        h = _rotl(h, 23) * P2 + P3
        p += 4
    while p < end:
        h = h ^ (U64(data[p]) * P5)
        h = _rotl(h, 11) * P1
        p += 1
    return _avalanche(h)


@njit(inline="always")
def xxh64_lanes(lanes: Any, start: int, n: int, seed: Any) -> Any:
    """xxHash64 (unsigned) of ``lanes[start:start + n]`` (uint64) as little-endian 8-byte lanes."""
    p = start
    end = start + n
    if n >= 4:
        v1 = seed + P1 + P2
        v2 = seed + P2
        v3 = seed
        v4 = seed - P1
        while p + 4 <= end:
            v1 = _round(v1, lanes[p])
            v2 = _round(v2, lanes[p + 1])
            v3 = _round(v3, lanes[p + 2])
            v4 = _round(v4, lanes[p + 3])
            p += 4
        h = _stripes(v1, v2, v3, v4)
    else:
        h = seed + P5
    h = h + U64(8 * n)
    while p < end:
        h = h ^ _round(U64(0), lanes[p])
        h = _rotl(h, 27) * P1 + P4
        p += 1
    return _avalanche(h)
