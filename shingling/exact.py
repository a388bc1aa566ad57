"""Exact resemblance and containment: the whole shingle sets of two texts, no sketch.

The reference definition of what the pair table's ``jaccard``, ``containment_a`` and
``containment_b`` hold when a run verifies its pairs (the default): a text's shingle set is every
distinct shingle hash of it (:func:`shingling.sketch.tokens`, :func:`shingling.sketch.shingle_hashes`,
the same hashes a sketch keeps the smallest of). :func:`shingling.fast.exact.overlap_batch` computes the
same on a whole Arrow batch of pairs; the tests hold the two equal.

>>> o = overlap("a b c d e", "A b c d f", width=4)
>>> o.shared, o.size_a, o.size_b, o.jaccard, o.containment_a
(1, 2, 2, 0.3333333333333333, 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass

from shingling.sketch import DEFAULT_WIDTH, shingle_hashes, tokens


def shingle_set(text: str, *, width: int = DEFAULT_WIDTH, unit: str = "words") -> frozenset[int]:
    """Every distinct shingle hash of a text (empty when it has no words).

    >>> len(shingle_set("Once upon a time, in a land far away"))
    6
    """
    return frozenset(shingle_hashes(tokens(text, unit), width))


@dataclass(frozen=True)
class Overlap:
    """Sizes of two shingle sets A and B and of their intersection."""

    shared: int
    size_a: int
    size_b: int

    @classmethod
    def of(cls, a: frozenset[int], b: frozenset[int]) -> Overlap:
        """The overlap of two shingle sets (:func:`shingle_set`)."""
        return cls(len(a & b), len(a), len(b))

    @property
    def jaccard(self) -> float:
        """|A ∩ B| / |A ∪ B|; 0.0 when both sets are empty."""
        union = self.size_a + self.size_b - self.shared
        return self.shared / union if union else 0.0

    @property
    def containment_a(self) -> float:
        """|A ∩ B| / |A|: how much of A lies in B; 0.0 when A is empty."""
        return self.shared / self.size_a if self.size_a else 0.0

    @property
    def containment_b(self) -> float:
        """|A ∩ B| / |B|: how much of B lies in A; 0.0 when B is empty."""
        return self.shared / self.size_b if self.size_b else 0.0


def overlap(
    text_a: str, text_b: str, *, width: int = DEFAULT_WIDTH, unit: str = "words"
) -> Overlap:
    """The exact overlap of two texts' shingle sets."""
    a, b = shingle_set(text_a, width=width, unit=unit), shingle_set(text_b, width=width, unit=unit)
    return Overlap.of(a, b)


def jaccard(text_a: str, text_b: str, *, width: int = DEFAULT_WIDTH, unit: str = "words") -> float:
    """The exact Jaccard resemblance of two texts: |A ∩ B| / |A ∪ B| of their shingle sets.

    >>> jaccard("Once upon a time, in a land far away", "ONCE upon a time -- in a land far away!")
    1.0
    """
    return overlap(text_a, text_b, width=width, unit=unit).jaccard
