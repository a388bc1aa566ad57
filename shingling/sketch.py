"""Sketches: a document's k smallest distinct shingle hashes, and optionally a mod-m sample.

Two modes, one code path:

- **bottom-k** (``sample_mod = 0``, the default): the k smallest distinct shingle hashes. Fixed size;
  estimates resemblance (Jaccard).
- **containment** (``sample_mod = m > 0``): besides the bottom-k, every shingle hash in the lowest
  1/m of the hash space (Broder's mod-m sample, by value rather than by remainder so that it stays a
  prefix of the sorted hashes). Its size grows with the document's length, about n/m hashes, so a
  passage lifted from a long document still leaves a trace in both sketches, and the containment
  |A ∩ B| / |A| can be estimated. The first k hashes are the bottom-k sketch: resemblance estimates
  are the same in both modes.

Shingles are made of words (``unit = "words"``) or, for scripts written without spaces (Chinese,
Japanese, Thai), of characters of the normalized text (``unit = "chars"``), spaces included.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shingling.hashing import shingle_hash, word_hash
from shingling.normalize import normalize
from shingling.shingles import shingles

DEFAULT_WIDTH = 4
DEFAULT_K = 20
UNITS = ("words", "chars")
_INT64_MIN = -(1 << 63)


class EmptyDocumentError(ValueError):
    """A text with no words after normalization: it has no shingles, so no sketch."""


def sample_bound(sample_mod: int) -> int | None:
    """The signed hash below which a shingle is in the mod-m sample (None when m = 0).

    >>> sample_bound(2)
    0
    >>> sample_bound(0) is None
    True
    """
    if sample_mod < 0:
        raise ValueError(f"sample_mod must be 0 (off) or positive, got {sample_mod}")
    return _INT64_MIN + (1 << 64) // sample_mod if sample_mod else None


@dataclass(frozen=True)
class Sketch:
    """A document's sketch.

    Attributes:
        hashes: ascending distinct shingle hashes: the k smallest, plus (containment mode) every
            one below :func:`sample_bound`; all of them when the document has that few.
        n_shingles: the number of distinct shingle hashes of the document.
        width: tokens per shingle.
        k: the bottom-k size.
        unit: "words" or "chars", what a shingle is made of.
        sample_mod: m of the mod-m sample, 0 when off.
    """

    hashes: tuple[int, ...]
    n_shingles: int
    width: int
    k: int
    unit: str = "words"
    sample_mod: int = 0

    def __post_init__(self) -> None:
        least = min(self.k, self.n_shingles)
        if (
            len(self.hashes) < least
            or len(self.hashes) > self.n_shingles
            or (not self.sample_mod and len(self.hashes) != least)
        ):
            raise ValueError(
                f"a sketch of {self.n_shingles} shingles with k = {self.k} and sample_mod = "
                f"{self.sample_mod} cannot hold {len(self.hashes)} hashes"
            )

    @property
    def is_complete(self) -> bool:
        """True when the sketch holds every shingle hash of the document."""
        return len(self.hashes) == self.n_shingles

    @property
    def bottom(self) -> tuple[int, ...]:
        """The bottom-k part: the k smallest hashes."""
        return self.hashes[: self.k]


def bottom_k(hashes: Iterable[int], k: int) -> tuple[int, ...]:
    """The k smallest distinct values, ascending.

    >>> bottom_k([5, -3, 5, 9, 0], 3)
    (-3, 0, 5)
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return tuple(heapq.nsmallest(k, set(hashes)))


def tokens(text: str, unit: str = "words") -> list[str]:
    """The tokens shingles are made of: the words of the normalized text, or its characters.

    >>> tokens("Big, big  giant!")
    ['big', 'big', 'giant']
    >>> tokens("日本語、です", "chars")
    ['日', '本', '語', ' ', 'で', 'す']
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    normalized = normalize(text)
    if unit == "chars":
        return list(normalized)
    return normalized.split(" ") if normalized else []


def shingle_hashes(words: Sequence[str], width: int = DEFAULT_WIDTH) -> list[int]:
    """The hash of every shingle of a token sequence, in document order (repeats kept).

    >>> len(shingle_hashes("a b c d e".split(), 4))
    2
    """
    hashed = {w: word_hash(w) for w in set(words)}
    return [shingle_hash([hashed[w] for w in s]) for s in shingles(words, width)]


def sketch(
    text: str,
    *,
    width: int = DEFAULT_WIDTH,
    k: int = DEFAULT_K,
    unit: str = "words",
    sample_mod: int = 0,
) -> Sketch:
    """The sketch of a text (see the module docstring for the modes).

    Raises:
        EmptyDocumentError: the text has no words after normalization.

    >>> s = sketch("Once upon a time, in a land far away, there lived a giant.", k=5)
    >>> s.n_shingles, len(s.hashes), s.hashes == tuple(sorted(s.hashes))
    (10, 5, True)
    >>> len(sketch("Once upon a time, in a land far away, there lived a giant.", k=5, sample_mod=1).hashes)
    10
    """
    found = tokens(text, unit)
    if not found:
        raise EmptyDocumentError("the text has no words after normalization, so no sketch")
    distinct = sorted(set(shingle_hashes(found, width)))
    bound = sample_bound(sample_mod)
    keep = max(k, sum(1 for h in distinct if h < bound)) if bound is not None else k
    return Sketch(
        hashes=tuple(distinct[:keep]),
        n_shingles=len(distinct),
        width=width,
        k=k,
        unit=unit,
        sample_mod=sample_mod,
    )
