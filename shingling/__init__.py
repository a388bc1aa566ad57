"""shingling: near-duplicate detection with w-word shingles and bottom-k sketches.

Compare two texts in a Python shell, no Spark needed:

>>> from shingling import sketch, similarity
>>> a = "Once upon a time, in a land far away, there lived a giant. He was big. Really big."
>>> b = "Once upon a time, in a land far away, there lived a GIANT. He was big! Really big!!!"
>>> similarity(a, b)
1.0
>>> round(similarity(a, "There lived a giant, once upon a time, in a land far away."), 2)
0.39
"""

from __future__ import annotations

from shingling.estimators import jaccard, matches, union_sample
from shingling.hashing import shingle_hash, word_hash, xxhash64
from shingling.normalize import normalize, words
from shingling.shingles import shingles
from shingling.sketch import (
    DEFAULT_K,
    DEFAULT_WIDTH,
    EmptyDocumentError,
    Sketch,
    bottom_k,
    sketch,
)

__all__ = [
    "DEFAULT_K",
    "DEFAULT_WIDTH",
    "EmptyDocumentError",
    "Sketch",
    "bottom_k",
    "jaccard",
    "matches",
    "normalize",
    "shingle_hash",
    "shingles",
    "similarity",
    "sketch",
    "union_sample",
    "word_hash",
    "words",
    "xxhash64",
]


def similarity(
    text_a: str, text_b: str, *, width: int = DEFAULT_WIDTH, k: int = DEFAULT_K
) -> float:
    """The bottom-k Jaccard estimate of two texts' resemblance (see :func:`jaccard`)."""
    return jaccard(sketch(text_a, width=width, k=k), sketch(text_b, width=width, k=k))
