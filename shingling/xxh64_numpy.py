"""xxHash64 of fixed-length runs of 8-byte lanes, for many inputs at once, in numpy.

A shingle hash is xxHash64 of its words' hashes (see :mod:`shingling.hashing`): an input made of
whole little-endian 8-byte lanes. For such inputs the xxHash64 algorithm (XXH64 spec, v0.1.1)
needs only its 32-byte stripe loop and its 8-byte tail step, which vectorize over any number of
inputs of the same lane count. The tests check it against the ``xxhash`` package.
"""

from __future__ import annotations

import numpy as np

P1 = np.uint64(11400714785074694791)
P2 = np.uint64(14029467366897019727)
P3 = np.uint64(1609587929392839161)
P4 = np.uint64(9650029242287828579)
P5 = np.uint64(2870177450012600261)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    acc = acc + lane * P2
    return _rotl(acc, 31) * P1


def xxh64_lanes(lanes: list[np.ndarray], seed: int) -> np.ndarray:
    """xxHash64 of each row of ``len(lanes)`` 8-byte lanes (lane j of row i is ``lanes[j][i]``).

    Args:
        lanes: equal-length uint64 arrays, one per lane, in input order.
        seed: the xxHash64 seed.

    Returns:
        The uint64 hashes, one per row.

    >>> import struct, xxhash
    >>> rows = [np.array([1, 2], dtype=np.uint64), np.array([3, 4], dtype=np.uint64)]
    >>> int(xxh64_lanes(rows, 42)[0]) == xxhash.xxh64_intdigest(struct.pack("<2Q", 1, 3), 42)
    True
    """
    if not lanes:
        raise ValueError("xxh64_lanes needs at least one lane")
    n = lanes[0].shape[0]
    s = np.uint64(seed)
    with np.errstate(over="ignore"):
        stripes = len(lanes) // 4
        if stripes:
            v1 = np.full(n, s + P1 + P2, dtype=np.uint64)
            v2 = np.full(n, s + P2, dtype=np.uint64)
            v3 = np.full(n, s, dtype=np.uint64)
            v4 = np.full(n, s - P1, dtype=np.uint64)
            for i in range(stripes):
                v1 = _round(v1, lanes[4 * i])
                v2 = _round(v2, lanes[4 * i + 1])
                v3 = _round(v3, lanes[4 * i + 2])
                v4 = _round(v4, lanes[4 * i + 3])
            h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
            for v in (v1, v2, v3, v4):
                h = (h ^ _round(np.zeros(n, dtype=np.uint64), v)) * P1 + P4
        else:
            h = np.full(n, s + P5, dtype=np.uint64)
        h = h + np.uint64(8 * len(lanes))
        for lane in lanes[4 * stripes :]:
            h = h ^ _round(np.zeros(n, dtype=np.uint64), lane)
            h = _rotl(h, 27) * P1 + P4
        h = h ^ (h >> np.uint64(33))
        h = h * P2
        h = h ^ (h >> np.uint64(29))
        h = h * P3
        h = h ^ (h >> np.uint64(32))
    return h
