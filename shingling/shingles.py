"""Shingles: overlapping windows of words, shifted by one word."""

from __future__ import annotations

from collections.abc import Sequence


def shingles(words: Sequence[str], width: int = 4) -> list[tuple[str, ...]]:
    """The overlapping ``width``-word windows of a word sequence.

    A document with fewer words than ``width`` has exactly one shingle, made of all its words; a
    document with no words has none.

    >>> shingles("a b c d e".split(), 4)
    [('a', 'b', 'c', 'd'), ('b', 'c', 'd', 'e')]
    >>> shingles(["a", "b"], 4)
    [('a', 'b')]
    >>> shingles([], 4)
    []
    """
    if width < 1:
        raise ValueError(f"shingle width must be at least 1, got {width}")
    if not words:
        return []
    if len(words) < width:
        return [tuple(words)]
    return [tuple(words[i : i + width]) for i in range(len(words) - width + 1)]
