"""bench.join_work's count of the tests the signatures pass, against the job's own kernels."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from testdata import licence_words, light_edits, sample_corpus

from bench.join_work import HOT_SIZES, hot_shares, pair_tests, signature_passes
from shingling.fast import postings
from shingling.fast.postings import sketch_arrays
from shingling.normalize import words
from shingling.sketch import sketch

K = 20
HOT = HOT_SIZES[0]


def real_sketches() -> list[tuple[int, ...]]:
    """Every 10th document of the sample corpus and a lightly edited copy of each."""
    rng = random.Random(3)
    found = []
    for _, text in sample_corpus()[::10]:
        edited = " ".join(light_edits(words(text), 0.1, list(licence_words()), rng))
        found += [sketch(text, width=4, k=K).hashes, sketch(edited, width=4, k=K).hashes]
    return [s for s in found if s]


@pytest.mark.parametrize("threshold", [0.3, 0.5])
@pytest.mark.parametrize("cap", [0, 3])
def test_signature_passes_count_the_pairs_the_kernels_signatures_pass(
    threshold: float, cap: int
) -> None:
    found = real_sketches()
    offsets, values = sketch_arrays(pa.array([list(s) for s in found], pa.list_(pa.int64())))
    # postings: every hash of every sketch (an edited copy shares most of its original's)
    pairs = sorted((h, row) for row, s in enumerate(found) for h in s)
    hashes = np.array([h for h, _ in pairs], dtype=np.int64)
    rows = np.array([row for _, row in pairs], dtype=np.int64)
    signatures = np.zeros((len(found), postings.SIGNATURE_WORDS + 1), dtype=np.uint64)
    for row in range(len(found)):
        postings.sign(values, offsets, row, K, signatures[row])
    brute, tests, brute_hot, hot_rows = 0, 0, 0, 0
    for h in np.unique(hashes):
        posting = rows[hashes == h]
        hot_rows += len(posting) if len(posting) >= HOT else 0
        if len(posting) < 2 or 0 < cap < len(posting):
            continue  # a star's pairs are scored, never tested
        for i in range(len(posting)):
            for j in range(i + 1, len(posting)):
                tests += 1
                a, b = posting[i], posting[j]
                passed = postings.signatures_may_reach(signatures, offsets, a, b, K, threshold)
                brute += passed
                brute_hot += passed if len(posting) >= HOT else 0
    counted = signature_passes(rows, hashes, offsets, values, K, threshold, cap)
    assert counted == brute
    assert 0 < counted < tests  # some pairs pass, most are refused
    # only the postings of at least HOT rows: what a filter carried by their rows would reach
    assert signature_passes(rows, hashes, offsets, values, K, threshold, cap, HOT) == brute_hot
    assert brute_hot < brute and (cap > 0 or brute_hot > 0)  # capped: large postings are stars
    shares = hot_shares(rows, hashes, offsets, values, K, threshold, cap)[str(HOT)]
    assert shares["prefix_rows"] == hot_rows
    assert shares["signature_passes"] == brute_hot


@pytest.mark.parametrize("threshold", [0.3, 0.5])
@pytest.mark.parametrize("cap", [0, 3])
def test_the_jobs_loop_counts_the_work_join_work_counts(threshold: float, cap: int) -> None:
    # the counters the job reports (pairs.pairs_tested, pairs.signature_passes in the summary),
    # from the posting loop itself, equal bench.join_work's offline count of the same postings
    found = real_sketches()
    listed = sorted((h, row) for row, s in enumerate(found) for h in s)
    hashes = np.array([h for h, _ in listed], dtype=np.int64)
    rows = np.array([row for _, row in listed], dtype=np.int64)
    table = pa.table(
        {
            "hash": hashes,
            "doc_id": rows,
            "n_shingles": pa.array([len(found[r]) for r in rows], pa.int64()),
            "sketch": pa.array([list(found[r]) for r in rows], pa.list_(pa.int64())),
        }
    )
    work = postings.JoinWork()
    scored = postings.score_table(table, k=K, threshold=threshold, max_posting=cap, work=work)
    offsets, values = sketch_arrays(pa.array([list(s) for s in found], pa.list_(pa.int64())))
    _, tests = pair_tests(hashes, cap)
    assert work.tested == tests
    assert work.signature_passes == signature_passes(
        rows, hashes, offsets, values, K, threshold, cap
    )
    stars = int(np.sum(scored.column("star").to_numpy(zero_copy_only=False)))
    assert stars <= scored.num_rows <= work.signature_passes + stars < work.tested
