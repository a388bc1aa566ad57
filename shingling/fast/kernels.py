"""The compiled inner loops: batch sketching, and scoring the pairs a join meets.

:func:`shingling.fast.batch.sketch_batch` folds a batch with Arrow kernels (NFKC, lowercase) and hands
the folded UTF-8 bytes to :func:`sketch_texts`, compiled by numba to machine code on first use
(cached on disk afterwards, see :class:`_Compiled`). Per text, in one pass and one buffer:

1. cut the tokens (words: runs of letter, mark and number code points, looked up in a table built
   from the normalizer's own pattern; characters: every code point) and hash each with xxHash64;
2. hash the whole token run (the text hash) and every window of ``width`` token hashes (the
   shingle hashes, written over the token hashes they replace);
3. count the distinct shingle hashes (a hash set) and keep the ``k`` smallest (a max-heap) and,
   with a sample bound, every one below it, in one pass; a text too long for the set sorts its
   hashes instead. (Sorting every text's hashes took 44% of the loop's time.)

It is the same arithmetic as :mod:`shingling.hashing` and :mod:`shingling.sketch`, which stay the
reference; the parity tests check the two bit for bit. xxHash64 follows the XXH64 specification
(v0.1.1); tests check it against the ``xxhash`` package.

The pair loops score two sketches with the arithmetic of :mod:`shingling.estimators` (tested pair
by pair): :func:`score_postings` every pair within each posting of a full run's prefix rows
(:mod:`shingling.fast.postings`), :func:`probe_sketches` each indexed sketch against a nightly batch's
prefixes (:mod:`shingling.fast.probe`). The full run's prefixes come from :func:`select_prefixes`, in
the order of a count-min sketch of hash frequencies (:func:`count_hashes`,
:mod:`shingling.fast.frequency`). :func:`valid_utf8` checks a batch's bytes before Arrow's text kernels
see them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from shingling import pairs

_U = np.uint64
P1 = _U(11400714785074694791)
P2 = _U(14029467366897019727)
P3 = _U(1609587929392839161)
P4 = _U(9650029242287828579)
P5 = _U(2870177450012600261)


class _Compiled:
    """A function compiled by numba on first call, its machine code cached on disk when it can be.

    numba keeps the cache next to the source (``__pycache__``) or in the user's cache directory
    (``NUMBA_CACHE_DIR`` chooses another; code shipped in a zip with ``--py-files`` always uses
    it). Where there is none, or saving fails (a read-only home on a cluster node), the function
    is compiled again without a cache: each process then compiles each loop it uses once (2 to 7 s
    each, measured).
    """

    def __init__(self, func: Callable[..., Any]) -> None:
        self.__doc__ = func.__doc__
        self._func = func
        self._compiled: Any = None
        try:
            self._cached: Any = njit(cache=True, nogil=True)(func)
        except RuntimeError:  # "no locator available": nowhere to keep a cache
            self._cached = None

    def __call__(self, *args: Any) -> Any:
        if self._cached is not None:
            try:
                return self._cached(*args)
            except OSError:  # the cache could not be written: compile without one
                self._cached = None
        if self._compiled is None:
            self._compiled = njit(cache=False, nogil=True)(self._func)
        return self._compiled(*args)


@njit(inline="always")
def _rotl(x: Any, r: int) -> Any:
    return (x << _U(r)) | (x >> _U(64 - r))


@njit(inline="always")
def _round(acc: Any, lane: Any) -> Any:
    acc = acc + lane * P2
    return _rotl(acc, 31) * P1


@njit(inline="always")
def _merge(h: Any, v: Any) -> Any:
    h = h ^ _round(_U(0), v)
    return h * P1 + P4


@njit(inline="always")
def _avalanche(h: Any) -> Any:
    h = h ^ (h >> _U(33))
    h = h * P2
    h = h ^ (h >> _U(29))
    h = h * P3
    return h ^ (h >> _U(32))


@njit(inline="always")
def _read(data: Any, p: int, n: int) -> Any:
    """The little-endian unsigned integer of ``n`` bytes at ``data[p]``."""
    v = _U(0)
    for j in range(n):
        v |= _U(data[p + j]) << _U(8 * j)
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
    h = h + _U(end - start)
    while p + 8 <= end:
        h = h ^ _round(_U(0), _read(data, p, 8))
        h = _rotl(h, 27) * P1 + P4
        p += 8
    if p + 4 <= end:
        h = h ^ (_read(data, p, 4) * P1)
        h = _rotl(h, 23) * P2 + P3
        p += 4
    while p < end:
        h = h ^ (_U(data[p]) * P5)
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
    h = h + _U(8 * n)
    while p < end:
        h = h ^ _round(_U(0), lanes[p])
        h = _rotl(h, 27) * P1 + P4
        p += 1
    return _avalanche(h)


def _valid_utf8(data: Any, offsets: Any, out: Any) -> None:
    """Whether each text ``data[offsets[i]:offsets[i + 1]]`` is well-formed UTF-8 (the Unicode
    standard's table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF, no cut
    sequence), what Arrow's text kernels require and Python's strict decoder accepts."""
    for i in range(len(offsets) - 1):
        p = offsets[i]
        end = offsets[i + 1]
        ok = True
        while p < end:
            b = data[p]
            if b < 0x80:
                p += 1
                continue
            lo, hi = 0x80, 0xBF  # the allowed range of the first continuation byte
            if 0xC2 <= b <= 0xDF:
                n = 1
            elif b == 0xE0:
                n, lo = 2, 0xA0
            elif b == 0xED:
                n, hi = 2, 0x9F
            elif 0xE1 <= b <= 0xEF:
                n = 2
            elif b == 0xF0:
                n, lo = 3, 0x90
            elif b == 0xF4:
                n, hi = 3, 0x8F
            elif 0xF1 <= b <= 0xF3:
                n = 3
            else:
                ok = False
                break
            if p + n >= end or not lo <= data[p + 1] <= hi:
                ok = False
                break
            for q in range(p + 2, p + n + 1):
                if data[q] & 0xC0 != 0x80:
                    ok = False
            if not ok:
                break
            p += n + 1
        out[i] = ok


valid_utf8 = _Compiled(_valid_utf8)


@njit(inline="always")
def _code_point(data: Any, p: int, end: int) -> tuple[Any, int]:
    """The code point starting at ``data[p]`` (a lead byte) and its size in bytes.

    A stray continuation byte reads as code point 0x80 (not part of a word), size 1; bytes past the
    text's end read as its last byte, so malformed UTF-8 cannot read out of bounds.
    """
    b = np.int64(data[p])
    if b < 0x80:
        return b, 1
    if b < 0xC0:
        return 0x80, 1
    last = end - 1
    c1 = np.int64(data[min(p + 1, last)]) & 0x3F
    if b < 0xE0:
        return ((b & 0x1F) << 6) | c1, 2
    c2 = np.int64(data[min(p + 2, last)]) & 0x3F
    if b < 0xF0:
        return ((b & 0x0F) << 12) | (c1 << 6) | c2, 3
    c3 = np.int64(data[min(p + 3, last)]) & 0x3F
    return min(((b & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3, 0x10FFFF), 4


@njit(inline="always")
def _token_hashes(
    data: Any, start: int, end: int, word_table: Any, chars: bool, seed: Any, out: Any
) -> int:
    """Hash every token of ``data[start:end]`` into ``out``; the number of tokens."""
    n = 0
    p = start
    if chars:
        while p < end:
            q = p + 1
            while q < end and (data[q] & 0xC0) == 0x80:
                q += 1
            out[n] = xxh64_bytes(data, p, q, seed)
            n += 1
            p = q
        return n
    word_start = -1
    while p < end:
        cp, size = _code_point(data, p, end)
        if word_table[cp]:
            if word_start < 0:
                word_start = p
        elif word_start >= 0:
            out[n] = xxh64_bytes(data, word_start, p, seed)
            n += 1
            word_start = -1
        p += size
    if word_start >= 0:
        out[n] = xxh64_bytes(data, word_start, min(p, end), seed)
        n += 1
    return n


def _sketch_texts(
    data: Any,
    offsets: Any,
    valid: Any,
    word_table: Any,
    chars: bool,
    width: int,
    k: int,
    sample_max: int,
    sampled: bool,
    seed: Any,
) -> tuple[Any, Any, Any, Any, Any]:
    """Sketch every text of a batch of folded UTF-8 texts.

    Args:
        data: the batch's UTF-8 bytes (uint8).
        offsets: int64 byte offsets of the texts in ``data``, one more than there are texts.
        valid: per text, False for a null text (it has no tokens, whatever its bytes).
        word_table: per code point, whether it is part of a word (unused when ``chars``).
        chars: tokens are characters (True) or words (False).
        width, k: the shingle width and the sketch size.
        sample_max, sampled: when ``sampled``, every shingle hash up to ``sample_max`` is kept too.
        seed: the xxHash64 seed, a numpy uint64.

    Returns:
        Per text: its tokens, its distinct shingles, its text hash (0 when it has no tokens) and the
        size of its sketch; then the sketches' hashes, ascending within each text, concatenated.
    """
    n_texts = len(offsets) - 1
    n_tokens = np.zeros(n_texts, dtype=np.int64)
    n_shingles = np.zeros(n_texts, dtype=np.int64)
    text_hash = np.zeros(n_texts, dtype=np.int64)
    sizes = np.zeros(n_texts, dtype=np.int64)
    longest = 0
    for t in range(n_texts):
        longest = max(longest, offsets[t + 1] - offsets[t])
    # a text of b bytes has at most b characters, and at most b // 2 + 1 words
    buf = np.empty(longest + 1 if chars else longest // 2 + 1, dtype=np.uint64)
    signed = buf.view(np.int64)
    values = np.empty(n_texts * min(k, 64) + 16, dtype=np.int64)
    slots = np.empty(SET_SIZE, dtype=np.int64)  # a hash set of one text's shingle hashes,
    stamps = np.zeros(SET_SIZE, dtype=np.int64)  # a slot is taken when it holds this text's stamp
    heap = np.empty(min(k, SET_SIZE), dtype=np.int64)
    picked = np.empty(SET_SIZE, dtype=np.int64)
    kept = 0
    for t in range(n_texts):
        if not valid[t]:
            continue
        n = _token_hashes(data, offsets[t], offsets[t + 1], word_table, chars, seed, buf)
        n_tokens[t] = n
        if n == 0:
            continue
        text_hash[t] = np.int64(xxh64_lanes(buf, 0, n, seed))
        # shingle i is written over token hash i, which no later shingle reads
        m = n - width + 1 if n >= width else 1
        w = width if n >= width else n
        for i in range(m):
            buf[i] = xxh64_lanes(buf, i, w, seed)
        if m <= SET_SIZE // 2:
            distinct, found = _bottom_k_by_set(
                buf, m, k, sampled, sample_max, t + 1, slots, stamps, heap, picked
            )
            chosen = picked[:found]
        else:  # a long text: sort its shingle hashes instead of a set (memory grows with m)
            distinct, found = _bottom_k_by_sort(signed[:m], k, sampled, sample_max)
            chosen = signed[:found]
        if kept + found > len(values):
            grown = np.empty(2 * (kept + found), dtype=np.int64)
            grown[:kept] = values[:kept]
            values = grown
        values[kept : kept + found] = chosen
        kept += found
        sizes[t] = found
        n_shingles[t] = distinct
    return n_tokens, n_shingles, text_hash, sizes, values[:kept]


sketch_texts = _Compiled(_sketch_texts)

#: Texts of up to half this many shingles find their distinct ones with a hash set of this size
#: (in cache: 16 bytes a slot), longer ones by sorting.
SET_SIZE = 1 << 14


@njit(inline="always")
def _sift_down(heap: Any, n: int) -> None:
    """Restore the max-heap order of ``heap[:n]`` after its top was replaced."""
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            return
        child = left
        if left + 1 < n and heap[left + 1] > heap[left]:
            child = left + 1
        if heap[child] <= heap[i]:
            return
        heap[i], heap[child] = heap[child], heap[i]
        i = child


@njit(inline="always")
def _bottom_k_by_set(
    hashes: Any,
    m: int,
    k: int,
    sampled: bool,
    sample_max: int,
    stamp: int,
    slots: Any,
    stamps: Any,
    heap: Any,
    picked: Any,
) -> tuple[int, int]:
    """The distinct count of ``hashes[:m]`` (uint64) and, sorted in ``picked``, its k smallest
    distinct values (signed) and every distinct value up to ``sample_max`` when ``sampled``;
    returns (distinct, how many were picked). One pass: a hash set marked with ``stamp`` (unique
    per call, so the set is never cleared) counts them, and a max-heap keeps the k smallest."""
    mask = len(slots) - 1
    room = min(k, m)  # the heap never holds more; the sampled values go after this many
    distinct = 0
    in_heap = 0
    n_sampled = 0
    for i in range(m):
        h = np.int64(hashes[i])
        slot = np.int64(hashes[i] >> _U(40)) & mask  # the hashes are uniform: their bits will do
        while stamps[slot] == stamp and slots[slot] != h:
            slot = (slot + 1) & mask
        if stamps[slot] == stamp:
            continue  # seen before in this text
        stamps[slot] = stamp
        slots[slot] = h
        distinct += 1
        if in_heap < k:
            heap[in_heap] = h
            j = in_heap
            in_heap += 1
            while j > 0 and heap[(j - 1) // 2] < heap[j]:  # sift up
                heap[(j - 1) // 2], heap[j] = heap[j], heap[(j - 1) // 2]
                j = (j - 1) // 2
        elif h < heap[0]:
            heap[0] = h
            _sift_down(heap, in_heap)
        if sampled and h <= sample_max:
            picked[room + n_sampled] = h
            n_sampled += 1
    # the heap's values just before the sampled ones; sort them all, drop repeats, move to front
    start = room - in_heap
    picked[start:room] = heap[:in_heap]
    found = picked[start : room + n_sampled]
    found.sort()
    n = 0
    for j in range(len(found)):
        if j == 0 or found[j] != found[j - 1]:
            picked[n] = found[j]  # n <= start + j: never ahead of the value being read
            n += 1
    return distinct, n


@njit(inline="always")
def _bottom_k_by_sort(shingles: Any, k: int, sampled: bool, sample_max: int) -> tuple[int, int]:
    """As :func:`_bottom_k_by_set` by sorting ``shingles`` (signed) in place; the picked values
    are moved to its front."""
    shingles.sort()
    distinct = 0
    n = 0
    for i in range(len(shingles)):
        h = shingles[i]
        if i > 0 and h == shingles[i - 1]:
            continue
        distinct += 1
        if distinct <= k or (sampled and h <= sample_max):
            shingles[n] = h
            n += 1
    return distinct, n


@njit
def _hash_bytes(data: Any, seed: Any) -> Any:
    return xxh64_bytes(data, 0, len(data), seed)


@njit
def _hash_lanes(lanes: Any, seed: Any) -> Any:
    return xxh64_lanes(lanes, 0, len(lanes), seed)


def hash_bytes(data: bytes, seed: int) -> int:
    """xxHash64 of bytes, unsigned, by this module's compiled code (for tests).

    >>> import xxhash
    >>> hash_bytes(b"shingling", 42) == xxhash.xxh64_intdigest(b"shingling", 42)
    True
    """
    return int(_hash_bytes(np.frombuffer(data, dtype=np.uint8), _U(seed)))


def hash_lanes(lanes: list[int], seed: int) -> int:
    """xxHash64 of unsigned 64-bit integers as little-endian 8-byte lanes (for tests).

    >>> import struct, xxhash
    >>> hash_lanes([1, 3], 42) == xxhash.xxh64_intdigest(struct.pack("<2Q", 1, 3), 42)
    True
    """
    return int(_hash_lanes(np.array(lanes, dtype=np.uint64), _U(seed)))


# the reference rules themselves, compiled
_min_shared = njit(inline="always")(pairs.min_shared)
_relation_code = njit(inline="always")(pairs.relation_code)


@njit(inline="always")
def _shared(va: Any, a0: int, a1: int, vb: Any, b0: int, b1: int) -> int:
    """How many values the sorted runs ``va[a0:a1]`` and ``vb[b0:b1]`` share."""
    n = 0
    while a0 < a1 and b0 < b1:  # without branches: which side advances is unpredictable
        x, y = va[a0], vb[b0]
        n += x == y
        a0 += x <= y
        b0 += y <= x
    return n


@njit(inline="always")
def _shares_enough(va: Any, a0: int, a1: int, vb: Any, b0: int, b1: int, need: int) -> bool:
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
def _shared_in_sample(va: Any, a0: int, a1: int, vb: Any, b0: int, b1: int, size: int) -> int:
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
def _known_end(values: Any, s0: int, s1: int, bound: Any, bounded: bool) -> int:
    """The end of the run ``values[s0:s1]`` cut at ``bound`` (inclusive) when ``bounded``."""
    if not bounded:
        return s1
    e = s0
    while e < s1 and values[e] <= bound:
        e += 1
    return e


#: A sketch's signature (:func:`_sign`): 256 bits, and how many of its hashes fell on a bit
#: already set.
SIGNATURE_WORDS = 4


@njit(inline="always")
def _sign(values: Any, offsets: Any, row: int, k: int, out: Any) -> None:
    """A row's signature in ``out``: one bit per hash of its bottom-k part, bit ``h & 255`` (the
    low bits of a bottom-k hash are as uniform as the hash; its high ones are not), then in
    ``out[SIGNATURE_WORDS]`` how many of those hashes found their bit set already."""
    out[:] = 0
    collided = 0
    for p in range(offsets[row], min(offsets[row + 1], offsets[row] + k)):
        bit = values[p] & (64 * SIGNATURE_WORDS - 1)
        mask = _U(1) << _U(bit & 63)
        if out[bit >> 6] & mask:
            collided += 1
        out[bit >> 6] |= mask
    out[SIGNATURE_WORDS] = collided


@njit(inline="always")
def _popcount(x: Any) -> int:
    x = x - ((x >> _U(1)) & _U(0x5555555555555555))
    x = (x & _U(0x3333333333333333)) + ((x >> _U(2)) & _U(0x3333333333333333))
    x = (x + (x >> _U(4))) & _U(0x0F0F0F0F0F0F0F0F)
    return int((x * _U(0x0101010101010101)) >> _U(56))


@njit(inline="always")
def _signatures_may_reach(
    signatures: Any, offsets: Any, a: int, b: int, k: int, threshold: float
) -> bool:
    """A necessary condition of :func:`_may_reach`, from the rows' signatures (:func:`_sign`).

    The hashes two bottom-k parts share fall on bits both signatures set; on one bit, at most as
    many as the fewer of the two parts' hashes on it. Summed over the bits: the shared hashes are
    at most the common bits plus the lesser of the two counts of hashes that fell on a bit already
    set (nearly always 0 or 1). This refuses most pairs met through one shared hash in a few
    instructions, and never a pair the intersection would pass.
    """
    ka = min(offsets[a + 1] - offsets[a], k)
    kb = min(offsets[b + 1] - offsets[b], k)
    need = _min_shared(min(k, max(ka, kb)), threshold)
    bound = int(min(signatures[a, SIGNATURE_WORDS], signatures[b, SIGNATURE_WORDS]))
    for w in range(SIGNATURE_WORDS):
        bound += _popcount(signatures[a, w] & signatures[b, w])
    return bound >= need


@njit(inline="always")
def _may_reach(
    va: Any, oa: Any, a: int, vb: Any, ob: Any, b: int, k: int, threshold: float
) -> bool:
    """:func:`shingling.pairs.may_reach` of rows a and b (equal: tests/shingling/fast)."""
    a0, b0 = oa[a], ob[b]
    ka1, kb1 = min(oa[a + 1], a0 + k), min(ob[b + 1], b0 + k)
    need = _min_shared(min(k, max(ka1 - a0, kb1 - b0)), threshold)
    return _shares_enough(va, a0, ka1, vb, b0, kb1, need)


@njit(inline="always")
def _score_pair(
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
    """One pair's scores (see :func:`_score_postings`); first False when the test dropped it.

    Row ``a``'s sketch is ``va[oa[a]:oa[a + 1]]`` and its shingle count ``na[a]``; row ``b``'s
    likewise in ``vb``, ``ob``, ``nb`` (the same arrays when both rows are of one table).
    """
    a0, a1, b0, b1 = oa[a], oa[a + 1], ob[b], ob[b + 1]
    ka1, kb1 = min(a1, a0 + k), min(b1, b0 + k)
    if test_first and not _may_reach(va, oa, a, vb, ob, b, k, threshold):
        return False, 0, 0.0, 0.0, 0.0, 0
    both = _shared(va, a0, ka1, vb, b0, kb1)
    size = ka1 - a0 + kb1 - b0 - both  # the union of the bottom-k parts
    if not (na[a] <= k and nb[b] <= k):
        size = min(size, k)
    jac = _shared_in_sample(va, a0, ka1, vb, b0, kb1, size) / size
    partial_a = a1 - a0 < na[a]
    partial_b = b1 - b0 < nb[b]
    if partial_a and partial_b:
        bound = min(va[a1 - 1], vb[b1 - 1])
    elif partial_a:
        bound = va[a1 - 1]
    else:
        bound = vb[b1 - 1]
    ea = _known_end(va, a0, a1, bound, partial_a or partial_b)
    eb = _known_end(vb, b0, b1, bound, partial_a or partial_b)
    known = _shared(va, a0, ea, vb, b0, eb)
    ca = known / (ea - a0) if ea > a0 else 0.0
    cb = known / (eb - b0) if eb > b0 else 0.0
    return True, both, jac, ca, cb, _relation_code(jac, ca, cb, threshold, containment_threshold)


def _score_postings(
    hashes: Any,
    order: Any,
    n_shingles: Any,
    offsets: Any,
    values: Any,
    k: int,
    threshold: float,
    containment_threshold: float,
    test_first: bool,
    max_posting: int,
    earlier: Any,
) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any]:
    """Every pair of rows with the same hash (rows sorted by hash), tested and scored.

    The arithmetic of :func:`shingling.pairs.may_reach` (and of
    :mod:`shingling.estimators`), on sketches as sorted runs of ``values`` (row i's sketch is
    ``values[offsets[i]:offsets[i + 1]]``).

    Args:
        hashes: each row's prefix hash; rows of one hash are adjacent.
        order: each row's document in id order (a pair's doc_a is the one with the smaller).
        n_shingles: each row's document's distinct shingle count.
        offsets, values: the rows' sketches.
        k, threshold: the bottom-k size and the Jaccard threshold.
        containment_threshold: the excerpt threshold; negative: none.
        test_first: drop the pairs that cannot reach ``threshold`` (``may_reach``) unscored.
        max_posting: a posting of more rows (0: no cap) pairs each with its first document in id
            order only (a star), every such pair scored.
        earlier: per row, the positions of its prefix hashes before this one
            (:func:`_select_prefixes`): a pair that shares one of those is left to that hash's
            posting; 0 or -1 for none.

    Returns:
        Per scored pair: row of doc_a, row of doc_b, matches, jaccard, containment_a,
        containment_b, relation (0: none, 1: near duplicate, 2: a in b, 3: b in a), and whether
        the pair is a star's.
    """
    n = len(hashes)
    cap = 1024
    found = (
        np.empty(cap, dtype=np.int64),
        np.empty(cap, dtype=np.int64),
        np.empty(cap, dtype=np.int32),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.int8),
        np.empty(cap, dtype=np.bool_),
    )
    out = 0
    start = 0
    scoring = (values, offsets, n_shingles, k, threshold, containment_threshold)
    signatures = np.zeros((n if test_first else 0, SIGNATURE_WORDS + 1), dtype=np.uint64)
    while start < n:
        end = start + 1
        while end < n and hashes[end] == hashes[start]:
            end += 1
        if 0 < max_posting < end - start:  # a star around the first document in id order
            centre = start
            for i in range(start, end):
                if order[i] < order[centre]:
                    centre = i
            for i in range(start, end):
                if i != centre:
                    found, out = _consider(found, out, scoring, centre, i, False, True)
        else:
            if test_first:
                for i in range(start, end):
                    _sign(values, offsets, i, k, signatures[i])
            for i in range(start, end):
                for j in range(i + 1, end):
                    if order[i] == order[j]:
                        continue
                    # tested here, before _consider: most pairs fail, and passing the arrays of
                    # found pairs in and out costs more than the test; the signatures first, then
                    # (for the few they cannot refuse) the intersection itself
                    if test_first and not (
                        _signatures_may_reach(signatures, offsets, i, j, k, threshold)
                        and _may_reach(values, offsets, i, values, offsets, j, k, threshold)
                    ):
                        continue
                    if _met_before(values, offsets, earlier, i, j):
                        continue
                    a, b = (i, j) if order[i] < order[j] else (j, i)
                    found, out = _consider(found, out, scoring, a, b, False, False)
        start = end
    return (
        found[0][:out],
        found[1][:out],
        found[2][:out],
        found[3][:out],
        found[4][:out],
        found[5][:out],
        found[6][:out],
        found[7][:out],
    )


@njit(inline="always")
def _consider(
    found: Any, out: int, scoring: Any, a: int, b: int, test_first: bool, star: bool
) -> tuple[Any, int]:
    """Score the pair (a, b) and, unless the test drops it, append it to ``found``."""
    values, offsets, n_shingles, k, threshold, containment_threshold = scoring
    ok, both, jac, ca, cb, rel = _score_pair(
        values,
        offsets,
        n_shingles,
        a,
        values,
        offsets,
        n_shingles,
        b,
        k,
        threshold,
        containment_threshold,
        test_first,
    )
    if not ok:
        return found, out
    if out == len(found[0]):
        size = 2 * out
        found = (
            _grown(found[0], size),
            _grown(found[1], size),
            _grown(found[2], size),
            _grown(found[3], size),
            _grown(found[4], size),
            _grown(found[5], size),
            _grown(found[6], size),
            _grown(found[7], size),
        )
    found[0][out] = a
    found[1][out] = b
    found[2][out] = both
    found[3][out] = jac
    found[4][out] = ca
    found[5][out] = cb
    found[6][out] = rel
    found[7][out] = star
    return found, out + 1


@njit(inline="always")
def _grown(array: Any, size: int) -> Any:
    grown = np.empty(size, dtype=array.dtype)
    grown[: len(array)] = array
    return grown


score_postings = _Compiled(_score_postings)


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
    """Row i of side a scored against row i of side b (:func:`_score_pair`, untested), for every i.

    Returns:
        Per row: matches, jaccard, containment_a, containment_b, relation (as
        :func:`_score_postings` gives them).
    """
    n = len(na)
    matches = np.empty(n, dtype=np.int32)
    jaccard = np.empty(n, dtype=np.float64)
    cont_a = np.empty(n, dtype=np.float64)
    cont_b = np.empty(n, dtype=np.float64)
    relation = np.empty(n, dtype=np.int8)
    for i in range(n):
        _, both, jac, ca, cb, rel = _score_pair(
            va, oa, na, i, vb, ob, nb, i, k, threshold, containment_threshold, False
        )
        matches[i], jaccard[i], cont_a[i], cont_b[i], relation[i] = both, jac, ca, cb, rel
    return matches, jaccard, cont_a, cont_b, relation


score_rows = _Compiled(_score_rows)


def _probe_slots(hashes: Any) -> tuple[Any, Any, Any, Any]:
    """Sorted hashes -> an open-addressing table of their distinct values: per slot the hash and
    the range ``[start, end)`` of its rows (start -1: an empty slot); and a bit array, 32 bits per
    value, one set for each (a filter small enough for the processor's cache: most hashes looked
    up are in no prefix, and one bit tells). Hashes are xxHash64 values: their low bits index the
    slots, bits 32 and up the filter."""
    n = len(hashes)
    distinct = 0
    for i in range(n):
        if i == 0 or hashes[i] != hashes[i - 1]:
            distinct += 1
    size = 16
    while size < 2 * distinct:
        size *= 2
    bits = np.zeros(max(size * 16 // 64, 1), dtype=np.int64)
    mask = size - 1
    keys = np.zeros(size, dtype=np.int64)
    starts = np.full(size, -1, dtype=np.int32)
    ends = np.zeros(size, dtype=np.int32)
    i = 0
    while i < n:
        j = i + 1
        while j < n and hashes[j] == hashes[i]:
            j += 1
        bit = (hashes[i] >> 32) & (size * 16 - 1)
        bits[bit >> 6] |= np.int64(1) << (bit & 63)
        slot = hashes[i] & mask
        while starts[slot] != -1:
            slot = (slot + 1) & mask
        keys[slot] = hashes[i]
        starts[slot] = i
        ends[slot] = j
        i = j
    return bits, keys, starts, ends


def _probe_sketches(
    bits: Any,
    keys: Any,
    starts: Any,
    ends: Any,
    probe_rows: Any,
    b_values: Any,
    b_offsets: Any,
    b_n: Any,
    y_values: Any,
    y_offsets: Any,
    y_n: Any,
    y_self: Any,
    y_probed: Any,
    seen: Any,
    stamp: int,
    k: int,
    threshold: float,
) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Each probed row y against the probe table's rows b whose prefix holds a hash of y's
    bottom-k part: every such pair (b, y) tested and scored once; those reaching ``threshold``.

    The probe table (``bits``, ``keys``, ``starts``, ``ends`` from :func:`_probe_slots` over the sorted prefix
    hashes, ``probe_rows`` the b row of each) holds the prefix of every b; the b sketches are
    ``b_values``/``b_offsets``/``b_n``, the y sketches ``y_values``/``y_offsets``/``y_n``. A row
    y is skipped unless ``y_probed``, and never paired with b = ``y_self[y]``. ``seen`` (one slot
    per b) remembers the last y each b met, as ``stamp + y``; the caller passes a ``stamp`` above
    every one used before, so the array needs no clearing between calls.

    Returns per pair: b row, y row, matches, jaccard, containment of b in y, of y in b.
    """
    mask = len(keys) - 1
    bit_mask = len(bits) * 64 - 1
    cap = 1024
    found_b = np.empty(cap, dtype=np.int64)
    found_y = np.empty(cap, dtype=np.int64)
    found_m = np.empty(cap, dtype=np.int32)
    found_j = np.empty(cap, dtype=np.float64)
    found_ca = np.empty(cap, dtype=np.float64)
    found_cb = np.empty(cap, dtype=np.float64)
    out = 0
    for y in range(len(y_n)):
        if not y_probed[y]:
            continue
        y0 = y_offsets[y]
        y1 = min(y_offsets[y + 1], y0 + k)
        mark = stamp + y
        for p in range(y0, y1):
            h = y_values[p]
            bit = (h >> 32) & bit_mask
            if (bits[bit >> 6] >> (bit & 63)) & 1 == 0:
                continue
            slot = h & mask
            while starts[slot] != -1 and keys[slot] != h:
                slot = (slot + 1) & mask
            if starts[slot] == -1:
                continue
            for q in range(starts[slot], ends[slot]):
                b = probe_rows[q]
                if seen[b] == mark or b == y_self[y]:
                    continue
                seen[b] = mark
                ok, both, jac, ca, cb, rel = _score_pair(
                    b_values,
                    b_offsets,
                    b_n,
                    b,
                    y_values,
                    y_offsets,
                    y_n,
                    y,
                    k,
                    threshold,
                    -1.0,
                    True,
                )
                if not ok or rel != 1:
                    continue
                if out == len(found_b):
                    found_b = _grown(found_b, 2 * out)
                    found_y = _grown(found_y, 2 * out)
                    found_m = _grown(found_m, 2 * out)
                    found_j = _grown(found_j, 2 * out)
                    found_ca = _grown(found_ca, 2 * out)
                    found_cb = _grown(found_cb, 2 * out)
                found_b[out] = b
                found_y[out] = y
                found_m[out] = both
                found_j[out] = jac
                found_ca[out] = ca
                found_cb[out] = cb
                out += 1
    return (
        found_b[:out],
        found_y[:out],
        found_m[:out],
        found_j[:out],
        found_ca[:out],
        found_cb[:out],
    )


probe_slots = _Compiled(_probe_slots)
probe_sketches = _Compiled(_probe_sketches)


@njit(inline="always")
def _slot(value: Any, multiplier: Any, width: Any) -> Any:
    # the top 32 bits of a multiply-shift hash (2-universal) of the value after MurmurHash3's
    # fmix64 finalizer (sketch hashes are their documents' smallest: their high bits are far from
    # random), scaled to [0, width) by a multiply and a shift (Lemire's reduction, width < 2**32)
    z = _U(value)
    z = (z ^ (z >> _U(33))) * _U(0xFF51AFD7ED558CCD)
    z = (z ^ (z >> _U(33))) * _U(0xC4CEB9FE1A85EC53)
    z = z ^ (z >> _U(33))
    return (((z * multiplier) >> _U(32)) * width) >> _U(32)


def _count_hashes(values: Any, counts: Any, multipliers: Any) -> None:
    """Add one to each hash's counter in every row of a count-min table (uint16, saturating)."""
    depth, width = counts.shape[0], _U(counts.shape[1])
    for v in values:
        for r in range(depth):
            s = _slot(v, multipliers[r], width)
            c = counts[r, s]
            if c < 65535:
                counts[r, s] = c + 1


@njit(inline="always")
def _estimate(value: Any, counts: Any, multipliers: Any) -> int:
    best = 65535
    width = _U(counts.shape[1])
    for r in range(counts.shape[0]):
        c = int(counts[r, _slot(value, multipliers[r], width)])
        if c < best:
            best = c
    return best


def _estimate_hashes(values: Any, counts: Any, multipliers: Any) -> Any:
    """The count-min estimate of each hash: the smallest of its counters (never below its count,
    unless that is above 65535)."""
    out = np.empty(len(values), dtype=np.int64)
    for i in range(len(values)):
        out[i] = _estimate(values[i], counts, multipliers)
    return out


def _select_prefixes(
    offsets: Any,
    values: Any,
    k: int,
    threshold: float,
    counts: Any,
    multipliers: Any,
    max_posting: int,
) -> tuple[Any, Any, Any]:
    """Each sketch's join prefix, rarest first by the count-min estimate of document frequency.

    Sketch i is ``values[offsets[i]:offsets[i + 1]]``; of its bottom-k part (n hashes), the hashes
    estimated in at least two sketches are ordered by (estimate, hash) and the first
    s - min_shared(n) + 1 of those s are kept (none when that is not positive).

    Each row also gets the positions in its sketch of the prefix hashes before its own (bit p:
    the sketch's hash p), those whose posting is never capped (estimate at most ``max_posting``,
    or any when it is 0): two documents meet first at the first prefix hash they share, and a
    later posting need not score them again (:func:`_met_before`). -1 where the bottom-k part is
    longer than 63 (no positions kept: the pair is scored in every posting, as before).

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
        need = _min_shared(end - start, threshold)
        s = 0
        for j in range(start, end):
            e = _estimate(values[j], counts, multipliers)
            if e >= 2:
                # insertion into the run est/held, kept sorted by (estimate, hash): at most k
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
        mask = 0
        for x in range(s - need + 1):
            rows[out] = i
            hashes[out] = held[x]
            earlier[out] = mask if end - start <= 63 else -1
            out += 1
            if max_posting == 0 or est[x] <= max_posting:
                mask |= np.int64(1) << where[x]
    return rows[:out], hashes[:out], earlier[:out]


@njit(inline="always")
def _met_before(values: Any, offsets: Any, earlier: Any, i: int, j: int) -> bool:
    """Whether rows i and j (of one posting) share a prefix hash before it (``earlier``'s
    positions, :func:`_select_prefixes`): their first shared prefix hash is another posting's,
    which scores them. Both sketches ascending: one merge of the marked positions."""
    mi, mj = earlier[i], earlier[j]
    if mi <= 0 or mj <= 0:  # nothing before, or positions unknown
        return False
    a0, a1, b0, b1 = offsets[i], offsets[i + 1], offsets[j], offsets[j + 1]
    p, q = a0, b0
    while p < a1 and q < b1:
        if not (mi >> (p - a0)) & 1:
            p += 1
        elif not (mj >> (q - b0)) & 1:
            q += 1
        elif values[p] == values[q]:
            return True
        elif values[p] < values[q]:
            p += 1
        else:
            q += 1
    return False


count_hashes = _Compiled(_count_hashes)
estimate_hashes = _Compiled(_estimate_hashes)
select_prefixes = _Compiled(_select_prefixes)


def _shingle_sets(
    data: Any,
    offsets: Any,
    valid: Any,
    word_table: Any,
    chars: bool,
    width: int,
    seed: Any,
) -> tuple[Any, Any, Any]:
    """The whole set of distinct shingle hashes of every text of a batch (the arguments are
    those of :func:`_sketch_texts`), for exact overlaps.

    Returns per text the start of its set in the values (one more than there are texts) and
    whether its set is sorted, then the values. A text of up to ``SET_SIZE // 2`` shingles finds
    its distinct ones with a hash set and keeps them in the order first seen (no sort: the pairs
    are counted by probing, :func:`_overlaps`); a longer one is sorted.
    """
    n_texts = len(offsets) - 1
    starts = np.zeros(n_texts + 1, dtype=np.int64)
    ordered = np.zeros(n_texts, dtype=np.bool_)
    longest = 0
    for t in range(n_texts):
        longest = max(longest, offsets[t + 1] - offsets[t])
    buf = np.empty(longest + 1 if chars else longest // 2 + 1, dtype=np.uint64)
    signed = buf.view(np.int64)
    # a text of b bytes has at most b characters and b // 2 + 1 words: room for every shingle
    values = np.empty((offsets[n_texts] - offsets[0]) // (1 if chars else 2) + n_texts, np.int64)
    slots = np.empty(SET_SIZE, dtype=np.int64)
    stamps = np.zeros(SET_SIZE, dtype=np.int64)
    mask = SET_SIZE - 1
    kept = 0
    for t in range(n_texts):
        starts[t] = kept
        if not valid[t]:
            continue
        n = _token_hashes(data, offsets[t], offsets[t + 1], word_table, chars, seed, buf)
        if n == 0:
            continue
        m = n - width + 1 if n >= width else 1
        w = width if n >= width else n
        for i in range(m):
            buf[i] = xxh64_lanes(buf, i, w, seed)
        if m <= SET_SIZE // 2:
            stamp = t + 1
            for i in range(m):
                h = np.int64(buf[i])
                slot = np.int64(buf[i] >> _U(40)) & mask
                while stamps[slot] == stamp and slots[slot] != h:
                    slot = (slot + 1) & mask
                if stamps[slot] != stamp:
                    stamps[slot] = stamp
                    slots[slot] = h
                    values[kept] = h
                    kept += 1
        else:
            run = signed[:m]
            run.sort()
            for i in range(m):
                if i == 0 or run[i] != run[i - 1]:
                    values[kept] = run[i]
                    kept += 1
            ordered[t] = True
    starts[n_texts] = kept
    return starts, ordered, values[:kept]


def _overlaps(starts: Any, ordered: Any, values: Any, side_a: Any, side_b: Any) -> Any:
    """Per pair i, how many values the sets ``side_a[i]`` and ``side_b[i]`` of
    :func:`_shingle_sets` share: the smaller set is put in a hash table and the other probes it;
    two sets too large for the table are sorted (each once, in place) and merged."""
    n = len(side_a)
    out = np.zeros(n, dtype=np.int64)
    slots = np.empty(SET_SIZE, dtype=np.int64)
    stamps = np.zeros(SET_SIZE, dtype=np.int64)
    mask = SET_SIZE - 1
    for i in range(n):
        a, b = side_a[i], side_b[i]
        if starts[a + 1] - starts[a] > starts[b + 1] - starts[b]:
            a, b = b, a  # a: the smaller set
        a0, a1, b0, b1 = starts[a], starts[a + 1], starts[b], starts[b + 1]
        if a1 == a0:
            continue
        if a1 - a0 > SET_SIZE // 2:
            for t in (a, b):
                if not ordered[t]:
                    values[starts[t] : starts[t + 1]].sort()
                    ordered[t] = True
            out[i] = _shared(values, a0, a1, values, b0, b1)
            continue
        stamp = i + 1
        for p in range(a0, a1):
            h = values[p]
            slot = (h >> 40) & mask
            while stamps[slot] == stamp:
                slot = (slot + 1) & mask
            stamps[slot] = stamp
            slots[slot] = h
        shared = 0
        for q in range(b0, b1):
            h = values[q]
            slot = (h >> 40) & mask
            while stamps[slot] == stamp:
                if slots[slot] == h:
                    shared += 1
                    break
                slot = (slot + 1) & mask
        out[i] = shared
    return out


shingle_sets = _Compiled(_shingle_sets)
overlaps = _Compiled(_overlaps)
