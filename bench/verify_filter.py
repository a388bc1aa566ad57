"""How many of verification's candidates a larger sketch would refuse before their texts travel:
a lever of issue 37 measured before it is built.

    python -m bench.verify_filter CORPUS CANDIDATE_RUN [--sample 300000] [--ks 20,64,128,256]
                                 [--threshold 0.5] [--miss 1e-6] [--json FILE]

``CANDIDATE_RUN`` is an estimate-only run of the job at the candidate threshold of the default run
(``--set pairs.verify=false --set pairs.threshold=0.3``): its pairs are the candidates the default
run verifies, and those that :func:`shingling.pairs.sizes_may_reach` keeps are the ones whose two
texts verification ships and shingles again. For a random sample of them, in one process without
Spark, this computes every document's whole shingle set (the compiled path,
:func:`shingling.fast.exact.shingle_sets`, held equal to :mod:`shingling.exact`), each pair's exact
Jaccard, and the bottom-K estimate for each K asked (:func:`shingling.estimators.jaccard` with a
larger k; checked equal to it on a sample of pairs here).

The filter it measures: refuse a candidate when its bottom-K sample of the union holds at most
``m`` shared hashes, ``m`` the largest count with exp(-K D(m/K || t)) <= ``miss`` (D the binary
relative entropy). The bottom-K estimate counts the shared hashes among K drawn without replacement
from the union, and Hoeffding's bound (1963, theorem 4: sampling without replacement is at least
as concentrated as with it) makes that the Chernoff bound of a pair of Jaccard exactly ``t``; a
pair above ``t`` is refused with less probability still. So a pair at or above the cut is lost with
probability at most ``miss``. When both documents have at most K shingles the sample is the whole
union and the filter is exact.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numba import njit

from bench import print_json
from shingling.estimators import jaccard as estimated_jaccard
from shingling.exact import shingle_set
from shingling.fast.exact import shingle_sets
from shingling.fast.text import Folded
from shingling.hashing import SEED
from shingling.pairs import sizes_may_reach
from shingling.schema import DOC_A, DOC_B, DOC_ID, SHINGLES_A, SHINGLES_B, TEXT
from shingling.sketch import DEFAULT_WIDTH, Sketch

BATCH = 2_000  # texts per compiled call
BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0000001)


def refusal_cut(k: int, threshold: float, miss: float) -> int:
    """The largest count of shared hashes m (of a K-sample) whose Chernoff bound of appearing for
    a pair of Jaccard ``threshold`` is at most ``miss``; -1 when even 0 is too likely.

    >>> refusal_cut(20, 0.5, 1e-6), refusal_cut(256, 0.5, 1e-6), refusal_cut(256, 0.5, 1e-3)
    (0, 86, 98)
    """

    def divergence(q: float, p: float) -> float:
        terms = 0.0 if q == 0 else q * math.log(q / p)
        return terms + (0.0 if q == 1 else (1 - q) * math.log((1 - q) / (1 - p)))

    cut = -1
    for m in range(int(k * threshold) + 1):
        if m / k < threshold and math.exp(-k * divergence(m / k, threshold)) <= miss:
            cut = m
    return cut


def sorted_sets(texts: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Every text's distinct shingle hashes, ascending (signed, the library's order): (starts,
    values), starts one longer than the texts."""
    starts_out, values_out, total = [np.zeros(1, np.int64)], [], 0
    for lo in range(0, len(texts), BATCH):
        batch = Folded.of(texts.slice(lo, BATCH), "words")
        starts, _, values = shingle_sets(*batch.loop_args(), width, np.uint64(SEED))
        values = values.copy()
        for t in range(len(starts) - 1):
            values[starts[t] : starts[t + 1]].sort()
        starts_out.append(starts[1:] + total)
        values_out.append(values)
        total += len(values)
    return np.concatenate(starts_out), np.concatenate(values_out)


@njit(cache=True)
def _pair_counts(starts, values, side_a, side_b, k):  # type: ignore[no-untyped-def]
    """Per pair: the exact shared count, and the bottom-k sample's size and shared count (the
    k smallest of the union, or the whole union when both sets have at most k values)."""
    n = len(side_a)
    shared = np.zeros(n, np.int64)
    sample = np.zeros(n, np.int64)
    sample_shared = np.zeros(n, np.int64)
    for p in range(n):
        a0, a1 = starts[side_a[p]], starts[side_a[p] + 1]
        b0, b1 = starts[side_b[p]], starts[side_b[p] + 1]
        whole = (a1 - a0) <= k and (b1 - b0) <= k
        i, j, taken, common, both = a0, b0, 0, 0, 0
        ka, kb = min(a1, a0 + k), min(b1, b0 + k)  # the two bottom-k sketches
        while i < a1 and j < b1:
            va, vb = values[i], values[j]
            if va == vb:
                both += 1
                if (whole or taken < k) and i < ka and j < kb:
                    taken += 1
                    common += 1
                i += 1
                j += 1
            elif va < vb:
                if (whole or taken < k) and i < ka:
                    taken += 1
                i += 1
            else:
                if (whole or taken < k) and j < kb:
                    taken += 1
                j += 1
        while i < ka and (whole or taken < k):
            taken += 1
            i += 1
        while j < kb and (whole or taken < k):
            taken += 1
            j += 1
        shared[p] = both
        sample[p] = taken
        sample_shared[p] = common
    return shared, sample, sample_shared


def measure(
    corpus: Path,
    run: Path,
    *,
    sample: int,
    ks: list[int],
    threshold: float,
    miss: float,
    seed: int = 7,
) -> dict[str, Any]:
    started = time.monotonic()
    pairs = pq.read_table(run / "pairs", columns=[DOC_A, DOC_B, SHINGLES_A, SHINGLES_B])
    listed = pairs.num_rows
    a_sizes = pairs[SHINGLES_A].to_numpy()
    b_sizes = pairs[SHINGLES_B].to_numpy()
    keep = np.array(
        [sizes_may_reach(int(x), int(y), threshold) for x, y in zip(a_sizes, b_sizes, strict=True)]
    )
    pairs = pairs.filter(pa.array(keep))
    verified = pairs.num_rows
    rng = np.random.default_rng(seed)
    if verified > sample:
        pairs = pairs.take(pa.array(np.sort(rng.choice(verified, sample, replace=False))))
    texts = pq.read_table(corpus, columns=[DOC_ID, TEXT])
    wanted = pc.unique(
        pa.concat_arrays([pairs[DOC_A].combine_chunks(), pairs[DOC_B].combine_chunks()])
    )
    texts = texts.filter(pc.is_in(texts[DOC_ID], value_set=wanted))
    ids = texts[DOC_ID].combine_chunks()
    starts, values = sorted_sets(texts[TEXT].combine_chunks(), DEFAULT_WIDTH)
    side_a = pc.index_in(pairs[DOC_A], value_set=ids).to_numpy().astype(np.int64)
    side_b = pc.index_in(pairs[DOC_B], value_set=ids).to_numpy().astype(np.int64)
    size_a, size_b = np.diff(starts)[side_a], np.diff(starts)[side_b]

    # the compiled sets are the library's (a few documents), and so are the estimates (a few pairs)
    text_list = texts[TEXT].combine_chunks()
    for t in rng.choice(len(ids), min(50, len(ids)), replace=False):
        got = set(values[starts[t] : starts[t + 1]].tolist())
        assert got == set(shingle_set(text_list[int(t)].as_py(), width=DEFAULT_WIDTH))

    results: dict[str, Any] = {}
    exact = None
    for k in ks:
        shared, taken, common = _pair_counts(starts, values, side_a, side_b, k)
        if exact is None:
            union = size_a + size_b - shared
            exact = np.where(union > 0, shared / np.maximum(union, 1), 0.0)
        for p in rng.choice(len(side_a), min(300, len(side_a)), replace=False):
            sa = values[starts[side_a[p]] : starts[side_a[p] + 1]][:k]
            sb = values[starts[side_b[p]] : starts[side_b[p] + 1]][:k]
            want = estimated_jaccard(
                Sketch(tuple(sa.tolist()), n_shingles=int(size_a[p]), width=DEFAULT_WIDTH, k=k),
                Sketch(tuple(sb.tolist()), n_shingles=int(size_b[p]), width=DEFAULT_WIDTH, k=k),
            )
            assert want == common[p] / taken[p], (k, p, want, common[p], taken[p])
        cut = refusal_cut(k, threshold, miss)
        whole = (size_a <= k) & (size_b <= k)  # the sample is the whole union: exact
        refused = np.where(whole, common < threshold * taken, common <= cut)
        above = exact >= threshold
        results[str(k)] = {
            "bytes_a_document": 8 * k,
            "refusal_cut_shared": cut,
            # both documents' whole sets in their K-sketches: decided exactly, no text needed
            "decided_exactly_share": round(float(whole.mean()), 4),
            "refused": int(refused.sum()),
            "refused_share": round(float(refused.mean()), 4),
            "refused_at_or_above_cut": int((refused & above).sum()),
            "left_to_verify_share": round(float(1 - refused.mean()), 4),
            "left_that_pass": round(float(above[~refused].mean()) if (~refused).any() else 1.0, 4),
        }
    assert exact is not None
    counts, _ = np.histogram(exact, bins=BUCKETS)
    return {
        "corpus": str(corpus),
        "candidate_run": str(run),
        "threshold": threshold,
        "miss": miss,
        "candidates_listed": listed,
        "candidates_verified": verified,
        "sampled": len(side_a),
        "pass_exact_share": round(float((exact >= threshold).mean()), 4),
        "exact_jaccard_histogram": {
            f"{lo:.1f}-{min(hi, 1.0):.1f}": int(c)
            for lo, hi, c in zip(BUCKETS, BUCKETS[1:], counts, strict=False)
        },
        "mean_text_bytes": round(float(np.mean(pc.binary_length(text_list).to_numpy())), 1),
        "mean_shingles": round(float(np.mean(np.diff(starts))), 1),
        "by_k": results,
        "seconds": round(time.monotonic() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.verify_filter", description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("run", type=Path)
    parser.add_argument("--sample", type=int, default=300_000)
    parser.add_argument("--ks", default="20,64,128,256")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--miss", type=float, default=1e-6)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out = measure(
        args.corpus,
        args.run,
        sample=args.sample,
        ks=[int(k) for k in args.ks.split(",")],
        threshold=args.threshold,
        miss=args.miss,
    )
    print_json(out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
