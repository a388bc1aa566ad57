"""How many documents' sketches hold each hash, estimated in fixed memory: the full run's join order.

The full run joins documents on a prefix of each sketch, its hashes taken rarest first (see
:func:`select_prefixes`), so that boilerplate and templates, whose hashes are in thousands of
sketches, stay out of the join. "Rarest" needs each hash's document frequency. Counting it exactly
is a shuffle of every (hash, document) row of the corpus, and at 1M documents that shuffle and the
regrouping by document after it took half of the pair stage. A count-min sketch (Cormode and
Muthukrishnan, 2005) gives an estimate instead, in memory fixed by configuration: each task counts
its documents' hashes into a table of ``depth`` rows of ``width`` counters, the tables are summed,
and every task then reads the estimate of a hash as the smallest of its ``depth`` counters.

Why the join stays lossless whatever the estimates' error: prefix filtering holds under any one
global order of hashes, and (estimate, hash) is one, since every task reads the same table. And a
count-min estimate is never below the true count (counters only add; they saturate at 65535, and
a saturated one is still at least 2), so a hash estimated in fewer than two sketches is truly in
one at most and can meet nothing: leaving it out of the prefixes loses nothing either. What error
costs is work: a hash that collides into a higher estimate is ordered later, or kept as "shared"
when it is not, which adds prefix rows; the pairs are the same. (Unless hot postings are capped,
``pairs.max_posting``: a table so crowded that its estimates no longer tell boilerplate from rare
text may let a hot hash into prefixes, and a capped posting pairs by star.)
:attr:`FrequencySketch.filled` says how crowded the table was (see docs/cluster.md for sizing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import njit

from shingling.fast.compiled import U64, Compiled
from shingling.fast.estimators import min_shared

DEPTH = 3
#: one odd multiplier per row (multiply-shift hashing; fixed, so every process agrees)
MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93],
    dtype=np.uint64,
)
COUNTER = np.dtype("<u2")  # little-endian: the bytes mean the same on every machine
SATURATED = int(np.iinfo(COUNTER).max)
BYTES_PER_HASH = 6  # a table this size per distinct hash is about 63% filled (1 - 1/e)
MAX_WIDTH = (1 << 32) - 1


class FrequencySketch:
    """A count-min sketch of 64-bit hashes: ``depth`` rows of ``width`` uint16 counters.

    >>> f = FrequencySketch(width=1000)
    >>> f.add(np.array([5, 5, 7], dtype=np.int64))
    >>> f.estimate(np.array([5, 7, 9], dtype=np.int64)).tolist()
    [2, 1, 0]
    """

    def __init__(self, width: int, depth: int = DEPTH, counts: np.ndarray | None = None):
        if not 1 <= width <= MAX_WIDTH or not 1 <= depth <= len(MULTIPLIERS):
            raise ValueError(
                f"width must be in [1, 2**32) and depth in [1, 4], got {width}, {depth}"
            )
        self.width = width
        self.depth = depth
        if counts is None:
            counts = np.zeros((depth, width), dtype=COUNTER)
        if counts.shape != (depth, width) or counts.dtype != COUNTER:
            raise ValueError(f"counts must be little-endian uint16 of shape {(depth, width)}")
        self.counts = counts

    @classmethod
    def for_hashes(
        cls, hashes: int, *, max_megabytes: float, depth: int = DEPTH
    ) -> FrequencySketch:
        """A sketch for about ``hashes`` distinct hashes (:data:`BYTES_PER_HASH` each, so about
        63% of its counters end up used), of at most ``max_megabytes`` (MiB)."""
        size = min(max(hashes, 1) * BYTES_PER_HASH, max_megabytes * (1 << 20))
        width = int(size // (depth * COUNTER.itemsize))
        return cls(min(max(width, 1), MAX_WIDTH), depth)

    @property
    def nbytes(self) -> int:
        return int(self.counts.nbytes)

    @property
    def filled(self) -> float:
        """The share of counters that are not zero: near 1, most hashes look shared and the join
        prefixes grow; a wider sketch helps."""
        return float(np.count_nonzero(self.counts)) / self.counts.size

    def add(self, hashes: np.ndarray) -> None:
        """Count each of ``hashes`` once (a sketch's hashes are distinct: once per document)."""
        count_hashes(hashes.astype(np.int64, copy=False), self.counts, MULTIPLIERS)

    def estimate(self, hashes: np.ndarray) -> np.ndarray:
        """Each hash's estimated count: never below the true one, or below 65535 when that is
        more (counters saturate)."""
        return estimate_hashes(hashes.astype(np.int64, copy=False), self.counts, MULTIPLIERS)

    def merge(self, other: FrequencySketch) -> FrequencySketch:
        """The sketch of both inputs' hashes (counters added, saturating)."""
        if (other.width, other.depth) != (self.width, self.depth):
            raise ValueError("only sketches of one shape merge")
        counts = add_counts([self.counts.tobytes(), other.counts.tobytes()])
        return FrequencySketch(self.width, self.depth, counts.reshape(self.depth, self.width))

    def blocks(self, n: int) -> Iterator[tuple[int, bytes]]:
        """The counters as ``n`` column blocks (block, bytes), to be summed block by block with
        :func:`add_counts` and put back with :meth:`from_blocks`."""
        for block, part in enumerate(np.array_split(self.counts, n, axis=1)):
            yield block, np.ascontiguousarray(part).tobytes()

    @classmethod
    def from_blocks(
        cls, width: int, depth: int, blocks: dict[int, bytes], n: int
    ) -> FrequencySketch:
        """The inverse of :meth:`blocks`. Every block must be there (none for an empty input):
        a missing one would read as zeros, estimates below the truth, and lost pairs."""
        sketch = cls(width, depth)
        if not blocks:
            return sketch
        if set(blocks) != set(range(n)):
            raise ValueError(f"expected blocks 0 to {n - 1}, got {sorted(blocks)}")
        start = 0
        for block, part in enumerate(np.array_split(sketch.counts, n, axis=1)):
            size = part.shape[1]
            counts = np.frombuffer(blocks[block], dtype=COUNTER).reshape(depth, size)
            sketch.counts[:, start : start + size] = counts
            start += size
        return sketch

    def to_bytes(self) -> bytes:
        return self.counts.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes, width: int, depth: int = DEPTH) -> FrequencySketch:
        """A read-only view of :meth:`to_bytes`' output (no copy)."""
        return cls(width, depth, np.frombuffer(data, dtype=COUNTER).reshape(depth, width))

    def select_prefixes(
        self,
        offsets: np.ndarray,
        values: np.ndarray,
        *,
        k: int,
        threshold: float,
        max_posting: int = 0,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each sketch's join prefix, ordered by this table's estimates: (row, hash, earlier) per
        prefix row (:func:`select_prefixes` of :meth:`estimates`)."""
        offsets = offsets.astype(np.int64, copy=False)
        values = values.astype(np.int64, copy=False)
        frequency = self.estimates(offsets, values, k=k)
        return select_prefixes(offsets, values, frequency, k, threshold, max_posting)

    def estimates(self, offsets: np.ndarray, values: np.ndarray, *, k: int) -> np.ndarray:
        """The estimate of each hash of each sketch's bottom-k part, aligned with ``values`` (0
        beyond the bottom-k parts)."""
        return estimate_bottom(
            offsets.astype(np.int64, copy=False),
            values.astype(np.int64, copy=False),
            k,
            self.counts,
            MULTIPLIERS,
        )


def add_counts(parts: list[bytes]) -> np.ndarray:
    """The saturating sum of equally long runs of counters (bytes of :data:`COUNTER`)."""
    total = np.zeros(len(parts[0]) // COUNTER.itemsize if parts else 0, dtype=np.uint32)
    for part in parts:
        total += np.frombuffer(part, dtype=COUNTER)
        np.minimum(total, SATURATED, out=total)  # each step, so the sum cannot wrap
    return total.astype(COUNTER)


@njit(inline="always")
def slot(value: Any, multiplier: Any, width: Any) -> Any:
    # the top 32 bits of a multiply-shift hash (2-universal) of the value after MurmurHash3's
    # fmix64 finalizer (sketch hashes are their documents' smallest: their high bits are far from
    # random), scaled to [0, width) by a multiply and a shift (Lemire's reduction, width < 2**32)
    z = U64(value)
    z = (z ^ (z >> U64(33))) * U64(0xFF51AFD7ED558CCD)
    z = (z ^ (z >> U64(33))) * U64(0xC4CEB9FE1A85EC53)
    z = z ^ (z >> U64(33))
    return (((z * multiplier) >> U64(32)) * width) >> U64(32)


def _count_hashes(values: Any, counts: Any, multipliers: Any) -> None:
    """Add one to each hash's counter in every row of a count-min table (uint16, saturating)."""
    depth, width = counts.shape[0], U64(counts.shape[1])
    for v in values:
        for r in range(depth):
            s = slot(v, multipliers[r], width)
            c = counts[r, s]
            if c < 65535:
                counts[r, s] = c + 1


@njit(inline="always")
def estimate(value: Any, counts: Any, multipliers: Any) -> int:
    best = 65535
    width = U64(counts.shape[1])
    for r in range(counts.shape[0]):
        c = int(counts[r, slot(value, multipliers[r], width)])
        if c < best:
            best = c
    return best


def _estimate_hashes(values: Any, counts: Any, multipliers: Any) -> Any:
    """The count-min estimate of each hash: the smallest of its counters (never below its count,
    unless that is above 65535)."""
    out = np.empty(len(values), dtype=np.int64)
    for i in range(len(values)):
        out[i] = estimate(values[i], counts, multipliers)
    return out


def _estimate_bottom(offsets: Any, values: Any, k: int, counts: Any, multipliers: Any) -> Any:
    """The count-min estimate of each hash of each sketch's bottom-k part, aligned with
    ``values`` (0 elsewhere)."""
    out = np.zeros(len(values), dtype=np.int64)
    for i in range(len(offsets) - 1):
        for j in range(offsets[i], min(offsets[i + 1], offsets[i] + k)):
            out[j] = estimate(values[j], counts, multipliers)
    return out


@njit(inline="always")
def shareable_in_order(
    values: Any, frequency: Any, start: int, end: int, est: Any, held: Any, where: Any
) -> int:
    """The hashes of ``values[start:end]`` found in at least two sketches (``frequency``, aligned
    with ``values``), ordered by (frequency, hash) into ``est`` (their frequencies), ``held``
    (the hashes) and ``where`` (their positions from ``start``); returns how many. The order
    of every join prefix: rarest first."""
    s = 0
    for j in range(start, end):
        e = frequency[j]
        if e >= 2:
            # insertion into the run est/held, kept sorted by (frequency, hash): at most k
            x = s
            while x > 0 and (est[x - 1] > e or (est[x - 1] == e and held[x - 1] > values[j])):
                est[x] = est[x - 1]
                held[x] = held[x - 1]
                where[x] = where[x - 1]
                x -= 1
            est[x] = e
            held[x] = values[j]
            where[x] = j - start
            s += 1
    return s


def _select_prefixes(
    offsets: Any,
    values: Any,
    frequency: Any,
    k: int,
    threshold: float,
    max_posting: int,
) -> tuple[Any, Any, Any]:
    """Each sketch's join prefix, rarest first by document frequency.

    Sketch i is ``values[offsets[i]:offsets[i + 1]]``, each hash's document frequency (counted
    exactly, or a count-min estimate: never below the count) at the same place of ``frequency``;
    of its bottom-k part (n hashes), the hashes in at least two sketches are ordered by
    (frequency, hash) and the first s - min_shared(n) + 1 of those s are kept (none when that is
    not positive).

    Each row also gets the positions in its sketch of the prefix hashes before its own (bit p:
    the sketch's hash p), those whose posting is never capped (frequency at most
    ``max_posting``, or any when it is 0): two documents meet first at the first prefix hash they
    share, and a later posting need not score them again
    (:func:`shingling.fast.postings.met_before`). -1 where the bottom-k part is longer than 63 (no
    positions kept: the pair is scored in every posting the two share).

    Returns:
        (row, hash, earlier) per prefix row, rows ascending.
    """
    rows = np.empty(len(values), dtype=np.int32)
    hashes = np.empty(len(values), dtype=np.int64)
    earlier = np.empty(len(values), dtype=np.int64)
    est = np.empty(max(k, 1), dtype=np.int64)
    held = np.empty(max(k, 1), dtype=np.int64)
    where = np.empty(max(k, 1), dtype=np.int64)
    out = 0
    for i in range(len(offsets) - 1):
        start = offsets[i]
        end = min(offsets[i + 1], start + k)
        need = min_shared(end - start, threshold)
        s = shareable_in_order(values, frequency, start, end, est, held, where)
        mask = 0
        for x in range(s - need + 1):
            rows[out] = i
            hashes[out] = held[x]
            earlier[out] = mask if end - start <= 63 else -1
            out += 1
            if max_posting == 0 or est[x] <= max_posting:
                mask |= np.int64(1) << where[x]
    return rows[:out], hashes[:out], earlier[:out]


count_hashes = Compiled(_count_hashes, writes=("counts",))
estimate_hashes = Compiled(_estimate_hashes)
estimate_bottom = Compiled(_estimate_bottom)
select_prefixes = Compiled(_select_prefixes)
