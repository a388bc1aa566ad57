"""Precision, recall and F1 of a run's scored pairs against the exact truth, on distinct texts.

Convention (as :mod:`bench.truth`): documents with the same normalized text form an exact group
represented by its smallest id; a reported pair (doc_a, doc_b) is read as the pair of their groups'
representatives, its score the largest score reported for that group pair, and pairs within a group
(exact copies) are scored apart as the share of copies linked to their representative through the
run's pairs. shingling writes a group of more than ``pairs.max_exact_group`` copies as a star (each
copy paired with the smallest id): it links every copy as a run that writes every pair does.

At a level L, a method's pairs are those whose own score is at least L (shingling: the pair
table's ``jaccard`` column; MinHashLSH peers: their MinHash estimate; MLlib: 1 - distCol, exact),
and they are compared with the truth pairs whose exact value is at least L.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.truth import Groups, copies_linked

LEVELS = (0.5, 0.8)


@dataclass(frozen=True)
class Level:
    level: float
    reported: int  # pairs of distinct texts the method scores at or above the level
    truth: int  # truth pairs at or above the level
    hits: int  # both
    precision: float | None
    recall: float | None
    f1: float | None


def scored_codes(
    pairs: np.ndarray, scores: np.ndarray, groups: Groups
) -> tuple[np.ndarray, np.ndarray]:
    """Document pairs (m, 2) and their scores -> (codes rep_a * n + rep_b of distinct group pairs,
    the largest score of each), pairs within a group left out.

    >>> g = Groups(rep=np.array([0, 1, 0, 3]), size=np.array([2, 1, 2, 1]))
    >>> c, s = scored_codes(np.array([[1, 2], [0, 1], [0, 2], [2, 3]]), np.array([.5, .7, 1., .2]), g)
    >>> c.tolist(), s.tolist()
    ([1, 3], [0.7, 0.2])
    """
    if len(pairs) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    n = np.int64(len(groups.rep))
    ra, rb = groups.rep[pairs[:, 0]], groups.rep[pairs[:, 1]]
    lo, hi = np.minimum(ra, rb), np.maximum(ra, rb)
    keep = lo != hi
    codes, score = lo[keep] * n + hi[keep], scores[keep].astype(np.float64)
    order = np.lexsort((-score, codes))  # by code, the largest score first
    codes, score = codes[order], score[order]
    first = np.concatenate(([True], codes[1:] != codes[:-1]))
    return codes[first], score[first]


def level(
    codes: np.ndarray,
    score: np.ndarray,
    truth_codes: np.ndarray,
    truth_value: np.ndarray,
    at: float,
) -> Level:
    """Precision, recall, F1 at one level.

    >>> level(np.array([1, 2, 3]), np.array([.9, .6, .4]), np.array([1, 3, 4]),
    ...       np.array([.95, .7, .5]), 0.5)
    Level(level=0.5, reported=2, truth=3, hits=1, precision=0.5, recall=0.3333333333333333, f1=0.4)
    """
    mine = codes[score >= at]
    true = truth_codes[truth_value >= at]
    hits = int(np.isin(mine, true).sum())
    precision = hits / len(mine) if len(mine) else None
    recall = hits / len(true) if len(true) else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall > 0
        else (0.0 if precision is not None and recall is not None else None)
    )
    return Level(at, int(len(mine)), int(len(true)), hits, precision, recall, f1)


def evaluate(
    pairs: np.ndarray,
    scores: np.ndarray,
    groups: Groups,
    truth_codes: np.ndarray,
    truth_value: np.ndarray,
    levels: tuple[float, ...] = LEVELS,
) -> dict:
    """Every level's figures, the distinct pairs reported and the copies linked."""
    codes, score = scored_codes(pairs, scores, groups)
    return {
        "reported": int(len(codes)),
        "levels": [level(codes, score, truth_codes, truth_value, at).__dict__ for at in levels],
        "copies_linked": copies_linked(pairs.reshape(-1, 2), groups),
    }
