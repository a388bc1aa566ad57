"""bench.verify_filter: its refusal cut is a bound, and its counts are the library's."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from testdata import SAMPLE_CORPUS, sample_corpus

from bench.verify_filter import measure, refusal_cut
from shingling.exact import shingle_set
from shingling.schema import DOC_A, DOC_B, SHINGLES_A, SHINGLES_B


def binomial_at_most(m: int, k: int, p: float) -> float:
    return sum(math.comb(k, i) * p**i * (1 - p) ** (k - i) for i in range(m + 1))


@pytest.mark.parametrize(("k", "threshold"), [(20, 0.5), (64, 0.5), (128, 0.8), (256, 0.5)])
@pytest.mark.parametrize("miss", [1e-3, 1e-6])
def test_the_refusal_cut_refuses_a_pair_at_the_threshold_at_most_miss_of_the_time(
    k: int, threshold: float, miss: float
) -> None:
    cut = refusal_cut(k, threshold, miss)
    assert cut < k * threshold
    if cut >= 0:  # the exact tail of a pair at the threshold (sampled with replacement) is below
        assert binomial_at_most(cut, k, threshold) <= miss
    # and the next count would be refused too often by the bound: the cut is the largest
    assert cut + 1 >= k * threshold or binomial_at_most(cut + 1, k, threshold) > miss / 1e3


def test_measure_counts_every_sampled_pair_and_refuses_none_above_the_cut(tmp_path: Path) -> None:
    # every pair of the sample's first 60 documents that shares a shingle, as a candidate run
    docs = sample_corpus()[:60]
    sets = {d: shingle_set(t, width=4) for d, t in docs}
    rows = [(a, b) for a, b in itertools.combinations(sorted(sets), 2) if sets[a] & sets[b]]
    assert len(rows) > 30
    (tmp_path / "pairs").mkdir()
    pq.write_table(
        pa.table(
            {
                DOC_A: [a for a, _ in rows],
                DOC_B: [b for _, b in rows],
                SHINGLES_A: [len(sets[a]) for a, _ in rows],
                SHINGLES_B: [len(sets[b]) for _, b in rows],
            }
        ),
        tmp_path / "pairs" / "part-0.parquet",
    )
    # measure checks its sets and estimates against the library's as it goes
    largest = max(len(s) for s in sets.values())
    out = measure(
        SAMPLE_CORPUS, tmp_path, sample=10_000, ks=[4, 20, largest], threshold=0.5, miss=1e-6
    )
    assert sum(out["exact_jaccard_histogram"].values()) == out["sampled"]
    passing = sum(1 for a, b in rows if len(sets[a] & sets[b]) >= 0.5 * len(sets[a] | sets[b]))
    assert out["pass_exact_share"] == round(passing / out["sampled"], 4)
    for found in out["by_k"].values():
        assert found["refused_at_or_above_cut"] == 0
    # a sketch larger than every document holds the whole sets: the filter is the exact decision
    whole = out["by_k"][str(largest)]
    assert whole["decided_exactly_share"] == 1.0 and whole["left_that_pass"] == 1.0
