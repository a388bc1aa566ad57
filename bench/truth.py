"""Exact truth: the Jaccard resemblance of shingle sets, and how well a run's pairs match it.

Shingle sets follow the library's definitions exactly (:func:`shingling.normalize.normalize_array`
to normalize, split on spaces as :func:`shingling.normalize.words` does, then
:func:`shingling.sketch.shingle_hashes`), in plain Python, so the truth does not share the
vectorized code (:mod:`shingling.fast.sketch`, :mod:`shingling.fast.exact`) that the pipeline runs.

Quality is measured on **distinct texts**: documents with the same normalized text form an exact
group, every reported pair is read as a pair of groups, and pairs within a group (exact copies) are
scored apart, as the share of copies linked to their group through the run's pairs. Otherwise one
page copied 5,000 times would be 12.5M pairs of Jaccard 1.0 and drown every other number, and a
run that writes a large group in a bounded form (each copy paired with one representative) would
look like it missed millions of pairs.

The evaluated pairs are the planted pairs (families, and pairs sharing only the boilerplate), every
pair any runner reported, and a random sample of other pairs; recall is measured against the pairs
among them at or above the Jaccard level. The acceptance curve is read on the planted and sampled
pairs only, which no runner chose.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import xxhash
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from shingling.hashing import SEED
from shingling.normalize import normalize_array
from shingling.sketch import DEFAULT_WIDTH, shingle_hashes

#: Jaccard bins of the acceptance curve: [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0].
BINS = np.round(np.arange(0.0, 1.01, 0.1), 1)


@dataclass(frozen=True)
class Groups:
    """Exact groups: ``rep[doc_id]`` is the smallest id with the same normalized text."""

    rep: np.ndarray  # int64, indexed by doc_id
    size: np.ndarray  # int64, members of each document's group, indexed by doc_id

    @property
    def copies(self) -> int:
        """Documents that are copies of a smaller id (members of a group other than its rep)."""
        return int(np.count_nonzero(self.rep != np.arange(len(self.rep))))


def exact_groups(corpus: Path) -> Groups:
    """Group the documents of a corpus (ids 0..n-1) by normalized text."""
    ids_parts, hash_parts = [], []
    for batch in ds.dataset(corpus, format="parquet").to_batches(
        columns=["doc_id", "text"], batch_size=20_000
    ):
        normalized = normalize_array(batch.column("text")).cast(pa.large_string())
        offsets = np.frombuffer(normalized.buffers()[1], dtype=np.int64)[normalized.offset :]
        data = memoryview(normalized.buffers()[2] or b"")
        digest = xxhash.xxh64_intdigest
        hashes = np.fromiter(
            (digest(data[offsets[i] : offsets[i + 1]], SEED) for i in range(len(normalized))),
            dtype=np.uint64,
            count=len(normalized),
        )
        ids_parts.append(batch.column("doc_id").to_numpy())
        hash_parts.append(hashes)
    ids = np.concatenate(ids_parts).astype(np.int64)
    hashes = np.concatenate(hash_parts)
    if ids.min() != 0 or ids.max() != len(ids) - 1 or len(np.unique(ids)) != len(ids):
        raise ValueError("the bench corpus must have doc ids 0..n-1")
    order = np.lexsort((ids, hashes))  # by hash, then id: the first of a run is its group's rep
    h, i = hashes[order], ids[order]
    starts = np.flatnonzero(np.concatenate(([True], h[1:] != h[:-1])))
    run_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(h))))
    rep = np.empty(len(ids), dtype=np.int64)
    size = np.empty(len(ids), dtype=np.int64)
    rep[i] = i[starts][run_of]
    size[i] = np.diff(np.append(starts, len(h)))[run_of]
    return Groups(rep=rep, size=size)


def shingle_sets(
    corpus: Path, ids: np.ndarray, width: int = DEFAULT_WIDTH
) -> dict[int, np.ndarray]:
    """Each listed document's distinct shingle hashes, sorted, by the library's definitions."""
    wanted = pa.array(np.unique(ids).astype(np.int64))
    table = ds.dataset(corpus, format="parquet").to_table(
        columns=["doc_id", "text"], filter=pc.field("doc_id").isin(wanted)
    )
    out: dict[int, np.ndarray] = {}
    for batch in table.to_batches(max_chunksize=5_000):
        normalized = normalize_array(batch.column("text")).to_pylist()
        for doc_id, text in zip(batch.column("doc_id").to_pylist(), normalized, strict=True):
            found = text.split(" ") if text else []
            out[doc_id] = np.unique(np.array(shingle_hashes(found, width), dtype=np.int64))
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted sets of hashes; 0.0 when both are empty.

    >>> jaccard(np.array([1, 2, 3]), np.array([2, 3, 4]))
    0.5
    """
    union = len(a) + len(b)
    if union == 0:
        return 0.0
    both = len(np.intersect1d(a, b, assume_unique=True))
    return both / (union - both)


def group_pairs(pairs: np.ndarray, groups: Groups) -> np.ndarray:
    """Document pairs (m, 2) -> distinct pairs of different groups (rep_a < rep_b), as (k, 2).

    >>> g = Groups(rep=np.array([0, 1, 0, 3]), size=np.array([2, 1, 2, 1]))
    >>> group_pairs(np.array([[1, 2], [0, 1], [0, 2], [2, 3]]), g).tolist()
    [[0, 1], [0, 3]]
    """
    if len(pairs) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    ra, rb = groups.rep[pairs[:, 0]], groups.rep[pairs[:, 1]]
    lo, hi = np.minimum(ra, rb), np.maximum(ra, rb)
    keep = lo != hi
    n = np.int64(len(groups.rep))
    code = np.unique(lo[keep] * n + hi[keep])
    return np.stack([code // n, code % n], axis=1)


def copies_linked(pairs: np.ndarray, groups: Groups) -> float | None:
    """Share of copies connected to their group's representative through pairs within the group."""
    if groups.copies == 0:
        return None
    within = pairs[groups.rep[pairs[:, 0]] == groups.rep[pairs[:, 1]]] if len(pairs) else pairs
    n = len(groups.rep)
    graph = (
        coo_matrix(
            (np.ones(len(within), dtype=np.int8), (within[:, 0], within[:, 1])), shape=(n, n)
        )
        if len(within)
        else coo_matrix((n, n), dtype=np.int8)
    )
    _, label = connected_components(graph, directed=False)
    copies = np.flatnonzero(groups.rep != np.arange(n))
    return float(np.mean(label[copies] == label[groups.rep[copies]]))


def random_pairs(groups: Groups, size: int, seed: int) -> np.ndarray:
    """About ``size`` random pairs of different groups (rep_a < rep_b)."""
    reps = np.unique(groups.rep)
    rng = np.random.default_rng([seed, 5])
    drawn = reps[rng.integers(0, len(reps), size=(size, 2))]
    return group_pairs(drawn, groups)


class Truth:
    """Exact Jaccard of group pairs, computed on demand and cached on disk beside the corpus."""

    def __init__(self, corpus: Path, cache: Path) -> None:
        self.corpus = corpus
        self.cache = cache
        self.groups = exact_groups(corpus)
        self.known: dict[tuple[int, int], float] = {}
        if cache.exists():
            t = pq.read_table(cache)
            self.known = dict(
                zip(
                    zip(t["a"].to_pylist(), t["b"].to_pylist(), strict=True),
                    t["jaccard"].to_pylist(),
                    strict=True,
                )
            )

    def compute(self, pairs: np.ndarray) -> np.ndarray:
        """Exact Jaccard of each group pair (rows rep_a < rep_b), computing only unknown ones."""
        todo = [(int(a), int(b)) for a, b in pairs if (int(a), int(b)) not in self.known]
        if todo:
            need = np.array(todo, dtype=np.int64)
            sets = shingle_sets(self.corpus, need.ravel())
            for a, b in todo:
                self.known[(a, b)] = jaccard(sets[a], sets[b])
            keys = list(self.known)
            pq.write_table(
                pa.table(
                    {
                        "a": pa.array([k[0] for k in keys], pa.int64()),
                        "b": pa.array([k[1] for k in keys], pa.int64()),
                        "jaccard": pa.array([self.known[k] for k in keys], pa.float64()),
                    }
                ),
                self.cache,
            )
        return np.array([self.known[(int(a), int(b))] for a, b in pairs], dtype=np.float64)


@dataclass(frozen=True)
class Quality:
    """How a run's pairs compare with the exact truth (distinct texts; see the module docstring)."""

    reported: int  # distinct pairs of different texts
    precision_50: float | None  # share of them with exact Jaccard >= 0.5
    recall_80: float | None  # share of evaluated pairs with Jaccard >= 0.8 that were reported
    recall_50: float | None
    copies_linked: float | None
    acceptance: list[float | None]  # per bin of BINS: share of planted and sampled pairs reported


def _codes(pairs: np.ndarray, n: int) -> np.ndarray:
    return pairs[:, 0].astype(np.int64) * n + pairs[:, 1] if len(pairs) else np.zeros(0, np.int64)


def evaluate(
    truth: Truth, runs: dict[str, np.ndarray], planted: np.ndarray, *, sample: int, seed: int
) -> tuple[dict[str, Quality], dict]:
    """Quality of every run's document pairs, and the evaluated set's description."""
    groups = truth.groups
    n = len(groups.rep)
    by_run = {name: group_pairs(p, groups) for name, p in runs.items()}
    sampled = random_pairs(groups, sample, seed)
    designed = np.unique(
        np.concatenate([_codes(group_pairs(planted, groups), n), _codes(sampled, n)])
    )
    codes = np.unique(np.concatenate([designed, *(_codes(p, n) for p in by_run.values())]))
    evaluated = np.stack([codes // n, codes % n], axis=1)
    exact = truth.compute(evaluated)
    bin_of = np.clip(np.digitize(exact, BINS[1:-1]), 0, len(BINS) - 2)
    # The curve is read on the planted and sampled pairs only: a pair some runner reported is
    # evaluated whatever its Jaccard, so counting those would inflate every runner's low bins.
    in_design = np.isin(codes, designed)
    described = {
        "pairs_evaluated": len(codes),
        "pairs_at_or_above_0.5": int(np.count_nonzero(exact >= 0.5)),
        "pairs_at_or_above_0.8": int(np.count_nonzero(exact >= 0.8)),
        "exact_groups_with_copies": int(len(np.unique(groups.rep[groups.size > 1]))),
        "copies": groups.copies,
        # random pairs at 0.5 or above: near-duplicates nobody planted (expected: none)
        "sampled_pairs": len(sampled),
        "sampled_at_or_above_0.5": int(np.count_nonzero(truth.compute(sampled) >= 0.5)),
        "bin_counts": np.bincount(bin_of[in_design], minlength=len(BINS) - 1).tolist(),
    }
    results = {}
    for name, pairs in by_run.items():
        hit = np.isin(codes, _codes(pairs, n))
        results[name] = Quality(
            reported=int(hit.sum()),
            precision_50=_share(exact[hit] >= 0.5),
            recall_80=_share(hit[exact >= 0.8]),
            recall_50=_share(hit[exact >= 0.5]),
            copies_linked=copies_linked(runs[name], groups),
            acceptance=[_share(hit[in_design & (bin_of == i)]) for i in range(len(BINS) - 1)],
        )
    return results, described


def _share(flags: np.ndarray) -> float | None:
    return float(np.mean(flags)) if len(flags) else None


def read_pairs(paths: Iterable[Path]) -> np.ndarray:
    """(doc_a, doc_b) of one or more Parquet pair tables, as an (m, 2) int64 array."""
    parts = []
    for path in paths:
        t = ds.dataset(path, format="parquet").to_table(columns=["doc_a", "doc_b"])
        parts.append(
            np.stack([t["doc_a"].to_numpy(), t["doc_b"].to_numpy()], axis=1).astype(np.int64)
        )
    return np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
