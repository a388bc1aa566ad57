"""shingling.fast.frequency: a count-min sketch never undercounts, and the prefixes it orders lose no pair."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from functools import cache

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import licence_words, light_edits, sample_corpus

from shingling.estimators import jaccard
from shingling.fast.frequency import FrequencySketch
from shingling.fast.postings import prefix_rows, sketch_arrays
from shingling.normalize import words
from shingling.pairs import min_shared
from shingling.sketch import Sketch, sketch

K = 20
hashes = st.lists(st.integers(-(2**63), 2**63 - 1), max_size=300)


@cache
def family_sketches() -> tuple[Sketch, ...]:
    """Every 10th document of the sample corpus and two lightly edited copies of each: real
    text, with near duplicates in every family and boilerplate shared across families."""
    rng = random.Random(11)
    out = []
    vocabulary = list(licence_words())
    for _, text in sample_corpus()[::10]:
        passage = words(text)
        out.append(sketch(text, width=4, k=K))
        for rate in (0.02, 0.1):
            edited = " ".join(light_edits(passage, rate, vocabulary, rng))
            out.append(sketch(edited, width=4, k=K))
    return tuple(s for s in out if s.hashes)


def counted(sketches: tuple[Sketch, ...], width: int) -> FrequencySketch:
    table = FrequencySketch(width)
    for s in sketches:
        table.add(np.array(s.hashes[:K], dtype=np.int64))
    return table


def reference_prefix(s: Sketch, table: FrequencySketch, threshold: float) -> list[int]:
    """The prefix as the docstring defines it, in plain Python."""
    part = list(s.hashes[:K])
    estimates = table.estimate(np.array(part, dtype=np.int64)).tolist()
    shared = sorted((e, h) for e, h in zip(estimates, part, strict=True) if e >= 2)
    keep = len(shared) - min_shared(len(part), threshold) + 1
    return [h for _, h in shared[: max(keep, 0)]]


@settings(max_examples=60, deadline=None)
@given(hashes, st.integers(1, 5000))
def test_an_estimate_is_never_below_the_count(values: list[int], width: int) -> None:
    table = FrequencySketch(width)
    table.add(np.array(values, dtype=np.int64))
    truth = Counter(values)
    estimates = table.estimate(np.array(list(truth), dtype=np.int64)).tolist()
    assert all(e >= truth[h] for e, h in zip(estimates, truth, strict=True))


def test_a_wide_sketch_counts_exactly_and_a_full_one_saturates() -> None:
    values = np.array([h for s in family_sketches() for h in s.hashes[:K]], dtype=np.int64)
    truth = Counter(values.tolist())
    table = FrequencySketch(1 << 22)
    table.add(values)
    estimates = table.estimate(np.array(list(truth), dtype=np.int64)).tolist()
    assert estimates == list(truth.values())  # thousands of hashes in 4M counters: no collision
    hot = FrequencySketch(16)
    hot.add(np.full(70_000, 7, dtype=np.int64))
    assert hot.estimate(np.array([7]))[0] == 65535
    assert hot.merge(hot).estimate(np.array([7]))[0] == 65535


@settings(max_examples=30, deadline=None)
@given(hashes, hashes, st.integers(1, 300), st.integers(1, 9))
def test_merged_and_block_wise_sketches_equal_one_sketch_of_everything(
    a: list[int], b: list[int], width: int, blocks: int
) -> None:
    left, right, both = (FrequencySketch(width) for _ in range(3))
    left.add(np.array(a, dtype=np.int64))
    right.add(np.array(b, dtype=np.int64))
    both.add(np.array(a + b, dtype=np.int64))
    merged = left.merge(right)
    assert np.array_equal(merged.counts, both.counts)
    parts = dict(merged.blocks(blocks))
    rebuilt = FrequencySketch.from_blocks(width, merged.depth, parts, blocks)
    assert np.array_equal(rebuilt.counts, both.counts)
    if blocks > 1:  # a missing block is refused, never read as zeros
        with pytest.raises(ValueError):
            FrequencySketch.from_blocks(width, merged.depth, {0: parts[0]}, blocks)
    copy = FrequencySketch.from_bytes(both.to_bytes(), width)
    assert np.array_equal(copy.counts, both.counts)


@pytest.mark.parametrize("width", [4, 300, 1 << 20])
@pytest.mark.parametrize("threshold", [0.3, 0.6, 0.9])
def test_prefixes_are_those_the_docstring_defines(width: int, threshold: float) -> None:
    sketches = family_sketches()
    table = counted(sketches, width)
    docs = pa.record_batch(
        {"doc_id": list(range(len(sketches))), "sketch": [list(s.hashes) for s in sketches]}
    )
    batch = prefix_rows(docs, table, k=K, threshold=threshold)
    rows = batch.to_pydict()
    got: dict[int, list[int]] = {}
    for doc, h in zip(rows["doc_id"], rows["hash"], strict=True):
        got.setdefault(doc, []).append(h)
    expected = {i: reference_prefix(s, table, threshold) for i, s in enumerate(sketches)}
    assert got == {i: p for i, p in expected.items() if p}
    offsets, values = sketch_arrays(batch.column("sketch"))  # packed: each row's whole sketch
    carried = [values[offsets[i] : offsets[i + 1]].tolist() for i in range(batch.num_rows)]
    assert carried == [list(sketches[i].hashes) for i in rows["doc_id"]]


@pytest.mark.parametrize("width", [2, 70, 1 << 20])
@pytest.mark.parametrize("threshold", [0.3, 0.6, 0.9])
def test_prefixes_lose_no_pair_however_wrong_the_estimates(width: int, threshold: float) -> None:
    # width 2: two counters a row for some 4,000 hashes, every estimate far off
    sketches = family_sketches()
    table = counted(sketches, width)
    offsets, values = sketch_arrays(pa.array([list(s.hashes) for s in sketches]))
    rows, found, earlier = table.select_prefixes(offsets, values, k=K, threshold=threshold)
    prefixes: dict[int, set[int]] = {}
    before: dict[
        tuple[int, int], set[int]
    ] = {}  # (row, prefix hash) -> the prefix hashes before it
    for row, h, mask in zip(rows.tolist(), found.tolist(), earlier.tolist(), strict=True):
        prefixes.setdefault(row, set()).add(h)
        held = sketches[row].hashes
        before[row, h] = {held[p] for p in range(len(held)) if mask >> p & 1}
    reaching = [
        (i, j)
        for i, j in itertools.combinations(range(len(sketches)), 2)
        if jaccard(sketches[i], sketches[j]) >= threshold
    ]
    assert len(reaching) >= 20
    lost = [(i, j) for i, j in reaching if not prefixes.get(i, set()) & prefixes.get(j, set())]
    assert lost == []
    # every pair that meets is scored in exactly one posting: that of the first hash it shares
    for i, j in itertools.combinations(sorted(prefixes), 2):
        shared = prefixes[i] & prefixes[j]
        first = [h for h in shared if not before[i, h] & before[j, h]]
        assert len(first) == (1 if shared else 0), (i, j)
        assert set(first) <= shared
    # and a filter: most documents have a prefix shorter than their sketch
    assert len(rows) < 0.8 * len(values)


def test_a_sketch_is_sized_for_its_hashes_within_its_bound() -> None:
    assert FrequencySketch.for_hashes(1000, max_megabytes=24).nbytes == 6000
    assert FrequencySketch.for_hashes(10**8, max_megabytes=24).nbytes <= 24 << 20
    assert FrequencySketch.for_hashes(10**8, max_megabytes=24).nbytes > (24 << 20) - 6
    assert FrequencySketch.for_hashes(0, max_megabytes=24).width >= 1
