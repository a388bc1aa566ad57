"""Comparing two sketches: the seed's match count and the bottom-k Jaccard estimate.

With bottom-k sketches S(A), S(B) of the shingle sets A, B, the k smallest hashes of S(A) ∪ S(B)
are the k smallest of A ∪ B: a uniform sample of the union. The share of that sample found in both
sketches is an unbiased estimate of the Jaccard resemblance |A ∩ B| / |A ∪ B|, with standard error
about sqrt(J (1 - J) / k). The raw match count |S(A) ∩ S(B)| / k is not: it reads about 0.62 for a
true 0.50 at k = 20, because two similar documents' sketches overlap beyond the union's sample.
"""

from __future__ import annotations

from shingling.sketch import Sketch


def _check_comparable(a: Sketch, b: Sketch) -> None:
    if a.width != b.width or a.k != b.k:
        raise ValueError(
            "sketches made with different settings cannot be compared: "
            f"width {a.width} and k {a.k} against width {b.width} and k {b.k}"
        )
    if not a.hashes or not b.hashes:
        raise ValueError("an empty sketch (a document with no words) cannot be compared")


def matches(a: Sketch, b: Sketch) -> int:
    """The seed's score: how many hashes the two sketches share, |S(A) ∩ S(B)|.

    >>> a = Sketch((1, 2, 3), n_shingles=3, width=4, k=3)
    >>> matches(a, Sketch((2, 3, 4), n_shingles=9, width=4, k=3))
    2
    """
    _check_comparable(a, b)
    return len(set(a.hashes) & set(b.hashes))


def union_sample(a: Sketch, b: Sketch) -> tuple[int, ...]:
    """The k smallest hashes of S(A) ∪ S(B), which are the k smallest of the union of shingle sets.

    >>> a = Sketch((1, 2, 3), n_shingles=3, width=4, k=3)
    >>> union_sample(a, Sketch((0, 2, 5), n_shingles=7, width=4, k=3))
    (0, 1, 2)
    """
    _check_comparable(a, b)
    return tuple(sorted(set(a.hashes) | set(b.hashes))[: a.k])


def shared_in_sample(a: Sketch, b: Sketch) -> int:
    """How many hashes of the union's k-sample lie in both sketches."""
    both = set(a.hashes) & set(b.hashes)
    return sum(1 for h in union_sample(a, b) if h in both)


def jaccard(a: Sketch, b: Sketch) -> float:
    """The bottom-k estimate of the Jaccard resemblance of two documents' shingle sets.

    Exact when both documents have at most k distinct shingles (their sketches are the whole sets).

    >>> a = Sketch((1, 2, 3), n_shingles=3, width=4, k=4)
    >>> jaccard(a, Sketch((2, 3, 4), n_shingles=3, width=4, k=4))
    0.5
    >>> jaccard(a, a)
    1.0
    """
    sample = union_sample(a, b)
    return shared_in_sample(a, b) / len(sample)
