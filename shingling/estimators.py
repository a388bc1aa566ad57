"""Comparing two sketches: the seed's match count, the bottom-k Jaccard estimate, containment.

With bottom-k sketches S(A), S(B) of the shingle sets A, B, the k smallest hashes of S(A) ∪ S(B)
are the k smallest of A ∪ B: a uniform sample of the union. The share of that sample found in both
sketches is an unbiased estimate of the Jaccard resemblance |A ∩ B| / |A ∪ B|, with standard error
about sqrt(J (1 - J) / k). The raw match count |S(A) ∩ S(B)| / k is not: it reads about 0.62 for a
true 0.50 at k = 20, because two similar documents' sketches overlap beyond the union's sample.

Containment |A ∩ B| / |A| is estimated on the hashes whose membership both sketches know: those at
or below the smaller of the two sketches' last hashes (a sketch is a prefix of its document's sorted
hashes). With mod-m sketches that is about |A| / m hashes of A, so the estimate sharpens with length.
"""

from __future__ import annotations

from shingling.sketch import Sketch


def _check_comparable(a: Sketch, b: Sketch) -> None:
    mine = (a.width, a.k, a.unit, a.sample_mod)
    theirs = (b.width, b.k, b.unit, b.sample_mod)
    if mine != theirs:
        raise ValueError(
            "sketches made with different settings cannot be compared: (width, k, unit, sample_mod) "
            f"{mine} against {theirs}"
        )
    if not a.hashes or not b.hashes:
        raise ValueError("an empty sketch (a document with no words) cannot be compared")


def matches(a: Sketch, b: Sketch) -> int:
    """The seed's score: how many bottom-k hashes the two sketches share, |S(A) ∩ S(B)|.

    >>> a = Sketch((1, 2, 3), n_shingles=3, width=4, k=3)
    >>> matches(a, Sketch((2, 3, 4), n_shingles=9, width=4, k=3))
    2
    """
    _check_comparable(a, b)
    return len(set(a.bottom) & set(b.bottom))


def union_sample(a: Sketch, b: Sketch) -> tuple[int, ...]:
    """The sample of A ∪ B the estimate counts: the k smallest hashes of S(A) ∪ S(B), which are the
    k smallest of the union of shingle sets; or the whole union when both sketches are whole sets.

    >>> a = Sketch((1, 2, 3), n_shingles=3, width=4, k=3)
    >>> union_sample(a, Sketch((0, 2, 5), n_shingles=7, width=4, k=3))
    (0, 1, 2)
    >>> union_sample(a, Sketch((2, 3, 4), n_shingles=3, width=4, k=3))
    (1, 2, 3, 4)
    """
    _check_comparable(a, b)
    union = sorted(set(a.bottom) | set(b.bottom))
    whole = a.n_shingles <= a.k and b.n_shingles <= b.k
    return tuple(union if whole else union[: a.k])


def shared_in_sample(a: Sketch, b: Sketch) -> int:
    """How many hashes of the union's k-sample lie in both sketches."""
    both = set(a.bottom) & set(b.bottom)
    return sum(1 for h in union_sample(a, b) if h in both)


def jaccard(a: Sketch, b: Sketch) -> float:
    """The bottom-k estimate of the Jaccard resemblance of two documents' shingle sets.

    Exact when both documents have at most k distinct shingles (their sketches are the whole sets,
    and the sample is their whole union).

    >>> a = Sketch((1, 2, 3), n_shingles=3, width=4, k=4)
    >>> jaccard(a, Sketch((2, 3, 4), n_shingles=3, width=4, k=4))
    0.5
    >>> jaccard(a, a)
    1.0
    """
    sample = union_sample(a, b)
    return shared_in_sample(a, b) / len(sample)


def known_through(s: Sketch) -> float:
    """The hash up to which the sketch knows its document's membership (inf when complete)."""
    return float("inf") if s.is_complete else s.hashes[-1]


def containment(a: Sketch, b: Sketch) -> float:
    """The estimate of |A ∩ B| / |A|: how much of document A lies in document B.

    >>> a = Sketch((1, 2), n_shingles=2, width=4, k=4)
    >>> b = Sketch((1, 2, 3, 4), n_shingles=4, width=4, k=4)
    >>> containment(a, b), containment(b, a)
    (1.0, 0.5)
    """
    _check_comparable(a, b)
    bound = min(known_through(a), known_through(b))
    sample_a = [h for h in a.hashes if h <= bound]
    if not sample_a:
        return 0.0
    in_b = {h for h in b.hashes if h <= bound}
    return sum(1 for h in sample_a if h in in_b) / len(sample_a)
