"""shingling.sketch: the k smallest distinct shingle hashes of a document, and its shingle count."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from testdata import NON_EMPTY_DOCUMENT, PUNCTUATION_ONLY, licence_texts

from shingling.hashing import shingle_hash, word_hash
from shingling.normalize import words
from shingling.shingles import shingles
from shingling.sketch import (
    DEFAULT_K,
    DEFAULT_WIDTH,
    EmptyDocumentError,
    Sketch,
    bottom_k,
    shingle_hashes,
    sketch,
)

K = st.integers(min_value=1, max_value=40)
WIDTH = st.integers(min_value=1, max_value=7)


def shingle_set(text: str, width: int) -> set[int]:
    """Every distinct shingle hash of a text, straight from the definitions."""
    return {shingle_hash([word_hash(w) for w in s]) for s in shingles(words(text), width)}


def test_defaults_are_width_4_and_k_20() -> None:
    assert (DEFAULT_WIDTH, DEFAULT_K) == (4, 20)
    s = sketch(licence_texts()["Apache-2.0"])
    assert (s.width, s.k, len(s.hashes)) == (4, 20, 20)


@settings(deadline=None)
@given(NON_EMPTY_DOCUMENT, WIDTH, K)
def test_sketch_is_the_k_smallest_distinct_shingle_hashes(text: str, width: int, k: int) -> None:
    full = shingle_set(text, width)
    if not full:
        with pytest.raises(EmptyDocumentError):
            sketch(text, width=width, k=k)
        return
    s = sketch(text, width=width, k=k)
    assert s.hashes == tuple(sorted(full)[:k])
    assert s.n_shingles == len(full)
    assert (s.width, s.k) == (width, k)
    assert s.is_complete == (len(full) <= k)


@settings(deadline=None)
@given(NON_EMPTY_DOCUMENT, NON_EMPTY_DOCUMENT, WIDTH, K)
def test_bottom_k_of_a_union_is_bottom_k_of_the_union_of_bottom_ks(
    a: str, b: str, width: int, k: int
) -> None:
    sa, sb = shingle_set(a, width), shingle_set(b, width)
    assume(sa | sb)
    union_of_sketches = tuple(sorted(set(sa)))[:k] + tuple(sorted(set(sb)))[:k]
    assert bottom_k(sa | sb, k) == bottom_k(union_of_sketches, k)
    if sa and sb:  # the same through the library's sketches
        sketches = sketch(a, width=width, k=k).hashes + sketch(b, width=width, k=k).hashes
        assert bottom_k(sa | sb, k) == bottom_k(sketches, k)


@settings(deadline=None)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1)), K)
def test_bottom_k_is_sorted_distinct_and_smallest(values: list[int], k: int) -> None:
    got = bottom_k(values, k)
    assert list(got) == sorted(set(values))[:k]


def test_bottom_k_refuses_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        bottom_k([1, 2], 0)


def test_short_document_has_one_shingle_of_all_its_words() -> None:
    s = sketch("GNU General Public", width=4, k=20)
    assert s.n_shingles == 1
    assert s.hashes == (
        shingle_hash([word_hash("gnu"), word_hash("general"), word_hash("public")]),
    )
    assert s.is_complete


@settings(deadline=None)
@given(PUNCTUATION_ONLY)
def test_document_without_words_has_no_sketch(text: str) -> None:
    with pytest.raises(EmptyDocumentError):
        sketch(text)


def test_case_and_punctuation_do_not_change_the_sketch() -> None:
    text = licence_texts()["BSD"]
    shouted = text.upper().replace(",", " ;; ").replace(".", "!")
    assert sketch(shouted) == sketch(text)


def test_repeated_shingles_count_once() -> None:
    paragraph = " ".join(words(licence_texts()["BSD"])[:50])
    once, twice = sketch(paragraph, k=200), sketch(paragraph + " " + paragraph, k=200)
    # doubling adds only the width - 1 shingles that straddle the seam
    assert twice.n_shingles == once.n_shingles + 3
    assert set(once.hashes) < set(twice.hashes)


def test_shingle_hashes_keep_document_order_and_repeats() -> None:
    w = "to be or not to be or not".split()
    hashes = shingle_hashes(w, 4)
    assert len(hashes) == 5 and hashes[0] == hashes[4] and len(set(hashes)) == 4


@pytest.mark.parametrize(
    ("hashes", "n_shingles", "k"), [((1, 2), 3, 5), ((1, 2, 3), 5, 2), ((), 1, 4)]
)
def test_sketch_of_the_wrong_size_is_refused(
    hashes: tuple[int, ...], n_shingles: int, k: int
) -> None:
    with pytest.raises(ValueError, match="hold"):
        Sketch(hashes, n_shingles=n_shingles, width=4, k=k)
