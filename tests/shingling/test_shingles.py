"""shingling.shingles: overlapping windows of words, shifted by one word."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.shingles import shingles

WORDS = st.lists(
    st.sampled_from(["the", "licence", "is", "free", "software", "you", "can"]), max_size=30
)


def test_windows_shift_by_one_word() -> None:
    assert shingles("this program is free software".split(), 3) == [
        ("this", "program", "is"),
        ("program", "is", "free"),
        ("is", "free", "software"),
    ]


def test_default_width_is_four() -> None:
    assert shingles("a b c d e".split()) == [("a", "b", "c", "d"), ("b", "c", "d", "e")]


def test_document_shorter_than_width_is_one_shingle_of_all_its_words() -> None:
    assert shingles(["free", "software"], 4) == [("free", "software")]
    assert shingles(["free"], 4) == [("free",)]


def test_document_of_exactly_width_words_is_one_shingle() -> None:
    assert shingles("a b c d".split(), 4) == [("a", "b", "c", "d")]


def test_no_words_no_shingles() -> None:
    assert shingles([], 4) == []


@pytest.mark.parametrize("width", [0, -1])
def test_width_below_one_is_refused(width: int) -> None:
    with pytest.raises(ValueError, match="width"):
        shingles(["a"], width)


@settings(deadline=None)
@given(WORDS, st.integers(min_value=1, max_value=8))
def test_shingles_cover_the_words_in_order(words: list[str], width: int) -> None:
    found = shingles(words, width)
    if not words:
        assert found == []
        return
    assert len(found) == max(len(words) - width + 1, 1)
    assert all(len(s) == min(width, len(words)) for s in found)
    # each window starts one word after the previous one; together they spell the text
    assert list(found[0]) + [s[-1] for s in found[1:]] == words
