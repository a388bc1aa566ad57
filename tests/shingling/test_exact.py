"""Exact resemblance: the reference (whole Python sets) and the batch form the job runs agree."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import DOCUMENT, licence_texts, overlapping_pair, sample_corpus

from shingling.exact import overlap, shingle_set
from shingling.fast.exact import overlap_batch
from shingling.fast.text import SET_SIZE
from shingling.sketch import sketch


def test_identical_texts_have_jaccard_one_and_disjoint_texts_zero() -> None:
    assert overlap("a b c d e", "A, b; c. d! e?").jaccard == 1.0
    assert overlap("a b c d e", "f g h i j").jaccard == 0.0


def test_shingle_set_is_every_hash_a_sketch_can_keep() -> None:
    text = next(iter(licence_texts().values()))
    assert shingle_set(text) == frozenset(sketch(text, k=10**9).hashes)


def test_containment_is_the_share_of_a_inside_b() -> None:
    long = " ".join(f"w{i}" for i in range(100))
    short = " ".join(f"w{i}" for i in range(10, 30))  # 17 of its 17 shingles are in long's 97
    o = overlap(short, long)
    assert (o.shared, o.size_a, o.size_b) == (17, 17, 97)
    assert o.containment_a == 1.0 and o.containment_b == 17 / 97


def _assert_batch_equals_reference(
    pairs: list[tuple[str | None, str | None]], width: int, unit: str = "words"
) -> None:
    got = overlap_batch(
        pa.array([a for a, _ in pairs], pa.string()),
        pa.array([b for _, b in pairs], pa.string()),
        width=width,
        unit=unit,
    )
    for i, (a, b) in enumerate(pairs):
        want = overlap(a or "", b or "", width=width, unit=unit)
        assert (got.shared[i], got.size_a[i], got.size_b[i]) == (
            want.shared,
            want.size_a,
            want.size_b,
        ), (a, b)
        # bit for bit: the same divisions, and 0.0 for an empty set, as the library
        assert got.jaccard[i] == want.jaccard, (a, b)
        assert got.containment_a[i] == want.containment_a, (a, b)
        assert got.containment_b[i] == want.containment_b, (a, b)
    # the same with ids naming the texts: each distinct text's set computed once
    names: dict[str | None, int] = {}
    ids = [[names.setdefault(t, len(names)) for t in side] for side in zip(*pairs, strict=True)]
    named = overlap_batch(
        pa.array([a for a, _ in pairs], pa.string()),
        pa.array([b for _, b in pairs], pa.string()),
        width=width,
        unit=unit,
        ids_a=pa.array(ids[0], pa.int64()),
        ids_b=pa.array(ids[1], pa.int64()),
    )
    for field in ("shared", "size_a", "size_b"):
        assert getattr(named, field).tolist() == getattr(got, field).tolist(), field


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(DOCUMENT, DOCUMENT), min_size=1, max_size=8), st.integers(1, 6))
def test_batch_overlap_equals_reference_on_random_unicode(
    pairs: list[tuple[str | None, str | None]], width: int
) -> None:
    _assert_batch_equals_reference(pairs, width)


@settings(max_examples=60, deadline=None)
@given(st.lists(overlapping_pair(), min_size=1, max_size=5), st.sampled_from(["words", "chars"]))
def test_batch_overlap_equals_reference_on_overlapping_texts(
    pairs: list[tuple[str, str]], unit: str
) -> None:
    _assert_batch_equals_reference(pairs, 4 if unit == "words" else 6, unit)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(DOCUMENT, min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=12),
)
def test_batch_overlap_with_repeated_documents_equals_reference(
    pool: list[str | None], picks: list[tuple[int, int]]
) -> None:
    # documents found in several pairs, on either side: their sets are computed once
    pairs = [(pool[a % len(pool)], pool[b % len(pool)]) for a, b in picks]
    _assert_batch_equals_reference(pairs, 4)


def test_batch_overlap_equals_reference_on_real_text() -> None:
    # the sample corpus's documents against their neighbours, and the licences against each other
    texts = [t for _, t in sample_corpus()][:200]
    pairs = list(zip(texts, texts[1:], strict=False))
    licences = list(licence_texts().values())
    pairs += list(itertools.combinations(licences[:8], 2))
    _assert_batch_equals_reference(pairs, 4)


@pytest.mark.parametrize("size", [0, 1, 3])
def test_batch_overlap_of_empty_batches_and_texts_without_words(size: int) -> None:
    got = overlap_batch(
        pa.array(["..."] * size, pa.string()), pa.array([None] * size, pa.string()), width=4
    )
    assert got.shared.tolist() == [0] * size
    assert got.jaccard.tolist() == [0.0] * size  # the library's Jaccard of empty sets
    assert got.containment_a.tolist() == got.containment_b.tolist() == [0.0] * size


@pytest.mark.parametrize("unit", ["words", "chars"])
def test_batch_overlap_equals_reference_on_sets_larger_than_the_hash_table(unit: str) -> None:
    # sets of over SET_SIZE // 2 shingles are sorted and merged instead of probed: against a short
    # text, against another long one, and the long text in both places of the batch
    licences = list(licence_texts().values())
    long, other = " ".join(licences), " ".join(reversed(licences))
    width = 4 if unit == "words" else 6
    if unit == "chars":  # a few times SET_SIZE // 2 shingles is enough, and the reference is slow
        long, other = long[:40_000], other[:40_000]
    assert len(shingle_set(long, width=width, unit=unit)) > SET_SIZE // 2
    pairs = [(long, other), (licences[0], long), (long, licences[1]), (long, long), (other, None)]
    _assert_batch_equals_reference(pairs, width, unit)
