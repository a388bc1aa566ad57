"""Bottom-k sketches: a document's k smallest distinct shingle hashes."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from shingling.hashing import shingle_hash, word_hash
from shingling.normalize import words as text_words
from shingling.shingles import shingles

DEFAULT_WIDTH = 4
DEFAULT_K = 20


class EmptyDocumentError(ValueError):
    """A text with no words after normalization: it has no shingles, so no sketch."""


@dataclass(frozen=True)
class Sketch:
    """A document's bottom-k sketch.

    Attributes:
        hashes: the k smallest distinct shingle hashes, ascending (all of them when the document
            has at most k distinct shingles).
        n_shingles: the number of distinct shingle hashes of the document.
        width: words per shingle.
        k: the sketch size asked for.
    """

    hashes: tuple[int, ...]
    n_shingles: int
    width: int
    k: int

    def __post_init__(self) -> None:
        if len(self.hashes) != min(self.k, self.n_shingles):
            raise ValueError(
                f"a bottom-{self.k} sketch of {self.n_shingles} shingles must hold "
                f"{min(self.k, self.n_shingles)} hashes, not {len(self.hashes)}"
            )

    @property
    def is_complete(self) -> bool:
        """True when the sketch holds every shingle hash of the document."""
        return self.n_shingles <= self.k


def bottom_k(hashes: Iterable[int], k: int) -> tuple[int, ...]:
    """The k smallest distinct values, ascending.

    >>> bottom_k([5, -3, 5, 9, 0], 3)
    (-3, 0, 5)
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return tuple(heapq.nsmallest(k, set(hashes)))


def shingle_hashes(words: list[str], width: int = DEFAULT_WIDTH) -> list[int]:
    """The hash of every shingle of a word sequence, in document order (repeats kept).

    >>> len(shingle_hashes("a b c d e".split(), 4))
    2
    """
    hashed = {w: word_hash(w) for w in set(words)}
    return [shingle_hash([hashed[w] for w in s]) for s in shingles(words, width)]


def sketch(text: str, *, width: int = DEFAULT_WIDTH, k: int = DEFAULT_K) -> Sketch:
    """The bottom-k sketch of a text.

    Raises:
        EmptyDocumentError: the text has no words after normalization.

    >>> s = sketch("Once upon a time, in a land far away, there lived a giant.", k=5)
    >>> s.n_shingles, len(s.hashes), s.hashes == tuple(sorted(s.hashes))
    (10, 5, True)
    """
    found = text_words(text)
    if not found:
        raise EmptyDocumentError("the text has no words after normalization, so no sketch")
    hashes = set(shingle_hashes(found, width))
    return Sketch(hashes=bottom_k(hashes, k), n_shingles=len(hashes), width=width, k=k)
