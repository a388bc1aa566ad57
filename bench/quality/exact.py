"""Exact truth on a whole corpus: every pair of distinct texts with Jaccard >= 0.3 or with one
document at least 0.8 contained in the other, found by an exact all-pairs set-similarity join.

Shingle sets follow the library's definitions in plain Python, as :mod:`bench.truth` computes them
(:func:`bench.truth.shingle_sets`: normalize, split on spaces, :func:`shingling.sketch.shingle_hashes`,
distinct), independently of the vectorized code the pipeline runs. Exact copies (same normalized
text) are grouped first as :func:`bench.truth.exact_groups` does, and the join runs on one
representative per group (its smallest id).

The join (AllPairs, Bayardo et al. 2007): every distinct shingle hash becomes a token id ranked by
how many representatives hold it, rarest first (ties by hash: one global order), and each set is
sorted in that order. Two sets with Jaccard >= t share at least ceil(t * |A|) tokens of A (and of
B), so their prefixes of length |A| - ceil(t |A|) + 1 and |B| - ceil(t |B|) + 1 meet: the
candidates are the pairs whose Jaccard prefixes (t = 0.3) share a token. For containment,
|A ∩ B| >= 0.8 |A| (A the smaller) means A's prefix of length |A| - ceil(0.8 |A|) + 1 holds a
token of B: those candidates come from A's short prefix against every token of every set at least
as large. Both are lossless under any global order; the rarest-first order keeps the candidates
few. Every candidate is then verified exactly (the intersection of the two full sorted sets), and
kept when J >= 0.3 or max containment >= 0.8. No sampling, no cap on frequent shingles.

Bounds use integer arithmetic (ceil(3 n / 10), ceil(4 n / 5)): 0.3 * 10 in floating point is
3.0000000000000004, whose ceiling would make a prefix one token too short.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from scipy.sparse import csr_matrix, triu

from bench.truth import Groups, exact_groups
from shingling.normalize import normalize_array
from shingling.sketch import DEFAULT_WIDTH, shingle_hashes

#: (numerator, denominator) of the levels the truth is complete for
JACCARD_FLOOR = (3, 10)
CONTAINMENT_FLOOR = (4, 5)


def ceil_frac(n: np.ndarray, num: int, den: int) -> np.ndarray:
    """ceil(n * num / den) in integers.

    >>> ceil_frac(np.array([10, 11, 0]), 3, 10).tolist()
    [3, 4, 0]
    """
    return (n * num + den - 1) // den


@dataclass
class ShingleSets:
    """Every document's distinct shingle hashes, sorted: row ``doc_id`` is
    ``values[offsets[doc_id]:offsets[doc_id + 1]]``."""

    offsets: np.ndarray  # int64, n + 1
    values: np.ndarray  # int64

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def get(self, doc_id: int) -> np.ndarray:
        return self.values[self.offsets[doc_id] : self.offsets[doc_id + 1]]


def plain_shingle_sets(corpus: Path, width: int = DEFAULT_WIDTH) -> ShingleSets:
    """Plain-Python shingle sets of every document of a corpus with ids 0..n-1."""
    rows: dict[int, np.ndarray] = {}
    for batch in ds.dataset(corpus, format="parquet").to_batches(
        columns=["doc_id", "text"], batch_size=5_000
    ):
        normalized = normalize_array(batch.column("text")).to_pylist()
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), normalized, strict=True):
            found = text.split(" ") if text else []
            rows[doc_id] = np.unique(np.array(shingle_hashes(found, width), dtype=np.int64))
    n = len(rows)
    if sorted(rows) != list(range(n)):
        raise ValueError("the corpus must have doc ids 0..n-1")
    sizes = np.array([len(rows[i]) for i in range(n)], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = (
        np.concatenate([rows[i] for i in range(n)]) if n else np.zeros(0, dtype=np.int64)
    ).astype(np.int64)
    return ShingleSets(offsets, values)


def load_shingle_sets(corpus: Path, cache: Path) -> ShingleSets:
    """:func:`plain_shingle_sets`, cached on disk beside the corpus."""
    if cache.exists():
        t = pq.read_table(cache)
        return ShingleSets(
            t["offsets"].to_numpy(), pq.read_table(cache.with_suffix(".values"))["v"].to_numpy()
        )
    sets = plain_shingle_sets(corpus)
    pq.write_table(pa.table({"v": sets.values}), cache.with_suffix(".values"))
    pq.write_table(pa.table({"offsets": sets.offsets}), cache)
    return sets


@numba.njit(cache=True, nogil=True)
def _overlaps(offsets, values, a, b):  # pragma: no cover - compiled
    out = np.empty(len(a), dtype=np.int64)
    for k in range(len(a)):
        i, j = offsets[a[k]], offsets[a[k] + 1]
        p, q = offsets[b[k]], offsets[b[k] + 1]
        n = 0
        while i < j and p < q:
            x, y = values[i], values[p]
            if x == y:
                n += 1
                i += 1
                p += 1
            elif x < y:
                i += 1
            else:
                p += 1
        out[k] = n
    return out


def overlaps(sets: ShingleSets, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|A ∩ B| of each pair (a[i], b[i]), exactly (merge of the two sorted sets)."""
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    return _overlaps(sets.offsets, sets.values, a.astype(np.int64), b.astype(np.int64))


@dataclass
class TruthPairs:
    """Every pair of representatives (a < b) with J >= 0.3 or max containment >= 0.8."""

    a: np.ndarray
    b: np.ndarray
    overlap: np.ndarray
    size_a: np.ndarray
    size_b: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def jaccard(self) -> np.ndarray:
        return self.overlap / (self.size_a + self.size_b - self.overlap)

    @property
    def containment(self) -> np.ndarray:
        """max(|A ∩ B| / |A|, |A ∩ B| / |B|)."""
        return self.overlap / np.minimum(self.size_a, self.size_b)

    def codes(self, n: int) -> np.ndarray:
        return self.a * np.int64(n) + self.b


def keep_mask(overlap: np.ndarray, size_a: np.ndarray, size_b: np.ndarray) -> np.ndarray:
    """J >= 0.3 or max containment >= 0.8, in integers."""
    jn, jd = JACCARD_FLOOR
    cn, cd = CONTAINMENT_FLOOR
    union = size_a + size_b - overlap
    return (overlap * jd >= jn * union) | (overlap * cd >= cn * np.minimum(size_a, size_b))


def all_pairs(sets: ShingleSets, docs: np.ndarray) -> TruthPairs:
    """The exact join over the documents ``docs`` (ids; those with no shingles are left out)."""
    started = time.monotonic()
    sizes_all = sets.sizes
    docs = np.sort(docs[sizes_all[docs] > 0]).astype(np.int64)
    sizes = sizes_all[docs]
    rows = np.repeat(np.arange(len(docs)), sizes)
    values = np.concatenate([sets.get(d) for d in docs]) if len(docs) else np.zeros(0, np.int64)
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.lexsort((uniq, counts))] = np.arange(len(uniq))  # rarest first, ties by hash
    tokens = rank[inverse]
    order = np.lexsort((tokens, rows))
    rows, tokens = rows[order], tokens[order]
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    position = np.arange(len(tokens)) - indptr[rows]
    shape = (len(docs), len(uniq))

    def matrix(mask: np.ndarray) -> csr_matrix:
        return csr_matrix(
            (np.ones(int(mask.sum()), dtype=np.int32), (rows[mask], tokens[mask])), shape=shape
        )

    prefix_j = sizes - ceil_frac(sizes, *JACCARD_FLOOR) + 1
    prefix_c = sizes - ceil_frac(sizes, *CONTAINMENT_FLOOR) + 1
    pj = matrix(position < prefix_j[rows])
    pc_ = matrix(position < prefix_c[rows])
    full = matrix(np.ones(len(tokens), dtype=bool))
    cj = triu(pj @ pj.T, k=1).tocoo()
    cc = (pc_ @ full.T).tocoo()
    small, large = cc.row, cc.col
    keep = (small != large) & (sizes[large] >= sizes[small])
    small, large = small[keep], large[keep]
    n = np.int64(len(docs))
    codes = np.unique(
        np.concatenate(
            [
                cj.row.astype(np.int64) * n + cj.col,
                np.minimum(small, large).astype(np.int64) * n + np.maximum(small, large),
            ]
        )
    )
    ia, ib = codes // n, codes % n
    a, b = docs[ia], docs[ib]
    candidates_seconds = time.monotonic() - started
    overlap = overlaps(sets, a, b)
    size_a, size_b = sizes_all[a], sizes_all[b]
    kept = keep_mask(overlap, size_a, size_b)
    return TruthPairs(
        a[kept],
        b[kept],
        overlap[kept],
        size_a[kept],
        size_b[kept],
        stats={
            "documents_joined": int(len(docs)),
            "distinct_shingles": int(len(uniq)),
            "shingles": int(len(tokens)),
            "jaccard_prefix_tokens": int(pj.nnz),
            "containment_prefix_tokens": int(pc_.nnz),
            "candidates_jaccard": int(cj.nnz),
            "candidates_containment": int(len(small)),
            "candidates": int(len(codes)),
            "kept": int(kept.sum()),
            "candidate_seconds": round(candidates_seconds, 2),
            "join_seconds": round(time.monotonic() - started, 2),
        },
    )


@dataclass
class ExactTruth:
    """A corpus's exact groups, shingle sets and truth pairs (of representatives)."""

    groups: Groups
    sets: ShingleSets
    pairs: TruthPairs
    seconds: dict

    @property
    def n(self) -> int:
        return len(self.groups.rep)

    def representatives(self) -> np.ndarray:
        return np.flatnonzero(self.groups.rep == np.arange(self.n))


def compute(corpus: Path, work: Path) -> ExactTruth:
    """Groups, plain-Python shingle sets (cached in ``work``) and the exact join."""
    t0 = time.monotonic()
    groups = exact_groups(corpus)
    t1 = time.monotonic()
    sets = load_shingle_sets(corpus, work / "shingle-offsets.parquet")
    t2 = time.monotonic()
    reps = np.flatnonzero(groups.rep == np.arange(len(groups.rep)))
    pairs = all_pairs(sets, reps)
    t3 = time.monotonic()
    return ExactTruth(
        groups,
        sets,
        pairs,
        {
            "groups": round(t1 - t0, 2),
            "shingle_sets": round(t2 - t1, 2),
            "join": round(t3 - t2, 2),
        },
    )


def brute_force(sets: ShingleSets, docs: np.ndarray) -> dict[tuple[int, int], int]:
    """|A ∩ B| of every pair of ``docs`` (a < b, both with shingles) kept by the truth's rule,
    by plain Python set intersection: the independent check of :func:`all_pairs`."""
    docs = sorted(int(d) for d in docs if sets.sizes[d] > 0)
    as_sets = {d: set(sets.get(d).tolist()) for d in docs}
    out = {}
    for i, a in enumerate(docs):
        for b in docs[i + 1 :]:
            o = len(as_sets[a] & as_sets[b])
            sa, sb = len(as_sets[a]), len(as_sets[b])
            if 10 * o >= 3 * (sa + sb - o) or 5 * o >= 4 * min(sa, sb):
                out[(a, b)] = o
    return out


def check_sample(truth: ExactTruth, size: int, seed: int) -> dict:
    """Brute force over ``size`` representatives, half drawn at random, half from truth pairs (so
    the check sees positives), against the join's pairs among them."""
    rng = np.random.default_rng(seed)
    reps = truth.representatives()
    reps = reps[truth.sets.sizes[reps] > 0]
    chosen = set(rng.choice(reps, size=min(size // 2, len(reps)), replace=False).tolist())
    if len(truth.pairs.a):
        picks = rng.choice(
            len(truth.pairs.a), size=min(size // 4, len(truth.pairs.a)), replace=False
        )
        chosen.update(truth.pairs.a[picks].tolist())
        chosen.update(truth.pairs.b[picks].tolist())
    docs = np.array(sorted(chosen), dtype=np.int64)
    started = time.monotonic()
    expected = brute_force(truth.sets, docs)
    inside = np.isin(truth.pairs.a, docs) & np.isin(truth.pairs.b, docs)
    found = {
        (int(a), int(b)): int(o)
        for a, b, o in zip(
            truth.pairs.a[inside], truth.pairs.b[inside], truth.pairs.overlap[inside], strict=True
        )
    }
    return {
        "documents": len(docs),
        "pairs_checked": len(docs) * (len(docs) - 1) // 2,
        "brute_force_pairs": len(expected),
        "join_pairs": len(found),
        "agree": expected == found,
        "seconds": round(time.monotonic() - started, 2),
    }
