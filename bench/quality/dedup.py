"""The dedup decision against the exact truth, beside the component rule it replaced.

jobs/dedup.py keeps a maximal independent set of the pair graph at the cut τ (docs/dedup.md);
before 2026-12-04 it kept one document per connected component. Both are read here on the same
pair table at the same cut: the decision from the job's ``removed/`` table, the component rule
computed in Python (:func:`component_rule`: connected components of the pairs at J ≥ τ, exact
copies included; in each, the longest text is kept, ties to the smallest id, as the old job did).

Each is audited against the exact truth (:mod:`bench.quality.exact`: every pair of distinct texts
at J ≥ 0.3, so complete for any τ ≥ 0.3; two documents of one exact group are at J = 1):

- **removed**: documents removed;
- **orphans (kept_id)**: removed documents whose ``kept_id`` is removed too, or whose exact Jaccard
  with it is below τ (for the component rule, ``kept_id`` is the component's kept document);
- **orphans (none left)**: removed documents with no document left in the output at exact J ≥ τ;
- **surviving pairs**: truth pairs of distinct texts at J ≥ τ both of whose exact groups keep a
  document (only pairs the pair job missed can survive the decision);
- **surviving copies**: documents left that have an exact copy left (0 when every copy was paired).

The decision promises 0 orphans of either kind; a removed document is counted by both kinds
when it is an orphan both ways.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bench.quality.exact import JACCARD_FLOOR

#: orphan ids listed in the results (the first ones, by id), to investigate
ORPHAN_IDS = 20


@dataclass(frozen=True)
class Truth:
    """The exact truth as the audit reads it.

    ``rep[doc_id]`` is the smallest id of the document's exact group; ``codes`` (sorted) are the
    truth pairs of representatives a < b as ``a * n + b``, ``jaccard`` their exact Jaccard.
    """

    rep: np.ndarray
    codes: np.ndarray
    jaccard: np.ndarray

    @classmethod
    def of(cls, rep: np.ndarray, a: np.ndarray, b: np.ndarray, jaccard: np.ndarray) -> Truth:
        """From the truth pairs (representatives, any order within a pair)."""
        rep = np.asarray(rep, dtype=np.int64)
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        n = np.int64(len(rep))
        codes = np.minimum(a, b) * n + np.maximum(a, b)
        order = np.argsort(codes, kind="stable")
        return cls(rep, codes[order], np.asarray(jaccard, dtype=np.float64)[order])

    @property
    def n(self) -> int:
        return len(self.rep)

    def pair_jaccard(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Exact Jaccard of each pair of documents (x[i], y[i]): 1.0 within an exact group, the
        truth's figure between groups, NaN when the truth holds no pair (J < 0.3).

        >>> t = Truth.of(np.array([0, 1, 0, 3]), np.array([0]), np.array([1]), np.array([0.6]))
        >>> t.pair_jaccard(np.array([2, 1, 3]), np.array([0, 2, 0])).tolist()
        [1.0, 0.6, nan]
        """
        ra = self.rep[np.asarray(x, dtype=np.int64)]
        rb = self.rep[np.asarray(y, dtype=np.int64)]
        n = np.int64(self.n)
        codes = np.minimum(ra, rb) * n + np.maximum(ra, rb)
        out = np.full(len(codes), np.nan)
        if len(self.codes):
            at = np.minimum(np.searchsorted(self.codes, codes), len(self.codes) - 1)
            found = self.codes[at] == codes
            out[found] = self.jaccard[at[found]]
        out[ra == rb] = 1.0
        return out


def component_rule(
    doc_a: np.ndarray,
    doc_b: np.ndarray,
    jaccard: np.ndarray,
    exact: np.ndarray,
    lengths: np.ndarray,
    cut: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One kept per connected component of the pairs at the cut (exact copies included), the
    longest text first, ties to the smallest id: (removed ids, the kept id of each), by id.

    >>> component_rule(np.array([0, 1, 3]), np.array([1, 2, 4]), np.array([.6, .6, .4]),
    ...                np.array([False] * 3), np.array([9, 5, 9, 1, 1]), 0.5)
    (array([1, 2]), array([0, 0]))
    """
    usable = np.asarray(exact, dtype=bool) | (np.asarray(jaccard) >= cut)
    a = np.asarray(doc_a, dtype=np.int64)[usable]
    b = np.asarray(doc_b, dtype=np.int64)[usable]
    docs = np.unique(np.concatenate([a, b]))
    if len(docs) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ia, ib = np.searchsorted(docs, a), np.searchsorted(docs, b)
    graph = coo_matrix((np.ones(len(ia)), (ia, ib)), shape=(len(docs), len(docs)))
    _, label = connected_components(graph, directed=False)
    length = np.asarray(lengths)[docs]
    order = np.lexsort((docs, -length, label))  # by component, the longest first, then the id
    first = np.concatenate(([True], label[order][1:] != label[order][:-1]))
    kept_of_label = np.empty(label.max() + 1, dtype=np.int64)
    kept_of_label[label[order][first]] = docs[order][first]
    kept = kept_of_label[label]
    removed = docs != kept
    return docs[removed], kept[removed]


def audit(truth: Truth, removed: np.ndarray, kept_id: np.ndarray, cut: float) -> dict:
    """The figures of the module docstring for one rule's removed documents and their kept ids.

    >>> t = Truth.of(np.arange(3), np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([.6, .6, .4]))
    >>> a = audit(t, np.array([1, 2]), np.array([0, 0]), 0.5)  # the chain, one kept: 2 orphaned
    >>> a["removed"], a["orphans_kept_id"], a["orphans_none_left"], a["surviving_pairs"]
    (2, 1, 1, 0)
    """
    if cut < JACCARD_FLOOR[0] / JACCARD_FLOOR[1]:
        raise ValueError(f"the truth is complete from J 0.3 only; the cut is {cut}")
    n = truth.n
    order = np.argsort(np.asarray(removed, dtype=np.int64), kind="stable")
    removed = np.asarray(removed, dtype=np.int64)[order]
    kept_id = np.asarray(kept_id, dtype=np.int64)[order]
    if len(np.unique(removed)) != len(removed):
        raise ValueError("a document is removed twice")
    gone = np.zeros(n, dtype=bool)
    gone[removed] = True
    rep = truth.rep
    # documents left in each exact group (indexed by the representative)
    left = np.bincount(rep[~gone], minlength=n)
    # the truth pairs at the cut, as representatives
    at_cut = truth.jaccard >= cut
    a, b = truth.codes[at_cut] // n, truth.codes[at_cut] % n
    # a group with a document left next to it at J >= cut
    neighbour_left = np.zeros(n, dtype=bool)
    neighbour_left[a[left[b] > 0]] = True
    neighbour_left[b[left[a] > 0]] = True
    # kept_id: removed too, or below the cut
    j = truth.pair_jaccard(removed, kept_id)
    by_kept_id = gone[kept_id] | ~(j >= cut)
    none_left = (left[rep[removed]] == 0) & ~neighbour_left[rep[removed]]
    surviving = (left[a] > 0) & (left[b] > 0)
    return {
        "removed": int(len(removed)),
        "orphans_kept_id": int(by_kept_id.sum()),
        "orphans_none_left": int(none_left.sum()),
        "surviving_pairs": int(surviving.sum()),
        "surviving_copies": int(np.maximum(left - 1, 0).sum()),
        "orphan_ids_kept_id": removed[by_kept_id][:ORPHAN_IDS].tolist(),
        "orphan_ids_none_left": removed[none_left][:ORPHAN_IDS].tolist(),
        "surviving_pair_ids": np.stack([a[surviving], b[surviving]], axis=1)[:ORPHAN_IDS].tolist(),
    }


def stated_jaccard_error(
    truth: Truth, removed: np.ndarray, kept_id: np.ndarray, stated: np.ndarray
) -> float | None:
    """The largest |stated - exact| Jaccard over the removed documents whose pair with their kept
    id the truth holds (``removed/``'s ``jaccard`` column is meant to be the exact figure)."""
    j = truth.pair_jaccard(removed, kept_id)
    known = ~np.isnan(j)
    if not known.any():
        return None
    return float(np.abs(np.asarray(stated, dtype=np.float64)[known] - j[known]).max())
