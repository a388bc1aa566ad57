"""bench.join_work's count of the tests the signatures pass, against the job's own kernels."""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pyarrow as pa
import pytest
from testdata import licence_words, light_edits, sample_corpus

from bench.join_work import HOT_SIZES, _pair_key_rows, hot_shares, pair_tests, signature_passes
from shingling.fast import postings
from shingling.fast.estimators import min_shared
from shingling.fast.frequency import FrequencySketch, select_prefixes
from shingling.fast.postings import sketch_arrays
from shingling.normalize import words
from shingling.sketch import sketch

K = 20
HOT = HOT_SIZES[0]


@cache
def real_sketches() -> tuple[tuple[int, ...], ...]:
    """Every 10th document of the sample corpus and a lightly edited copy of each (made once)."""
    rng = random.Random(3)
    found = []
    for _, text in sample_corpus()[::10]:
        edited = " ".join(light_edits(words(text), 0.1, list(licence_words()), rng))
        found += [sketch(text, width=4, k=K).hashes, sketch(edited, width=4, k=K).hashes]
    return tuple(s for s in found if s)


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


@pytest.mark.parametrize("threshold", [0.3, 0.5])
@pytest.mark.parametrize("hot", [2, 4, 1000])
def test_pair_keys_lose_no_pair_the_prefixes_must_meet(threshold: float, hot: int) -> None:
    # every two sketches sharing min_shared hashes of the larger one (the pairs whose prefixes
    # must meet) share a key of the pair-keyed join too, whatever is hot; no cap
    found = real_sketches()
    offsets, values = sketch_arrays(pa.array([list(s) for s in found], pa.list_(pa.int64())))
    frequencies = FrequencySketch(width=4096)
    frequencies.add(values)
    estimates = frequencies.estimates(offsets, values, k=K)
    rows, keys = _pair_key_rows(offsets, values, estimates, K, threshold, hot, 0)
    keys_of: dict[int, set[int]] = {}
    for row, key in zip(rows.tolist(), keys.tolist(), strict=True):
        keys_of.setdefault(row, set()).add(key)
    must = 0
    for a in range(len(found)):
        for b in range(a + 1, len(found)):
            shared = len(set(found[a]) & set(found[b]))
            if shared >= min_shared(min(K, max(len(found[a]), len(found[b]))), threshold):
                must += 1
                assert keys_of.get(a, set()) & keys_of.get(b, set()), (a, b)
    assert must >= 20
    prefix_rows, prefix_hashes, _ = select_prefixes(offsets, values, estimates, K, threshold, 0)
    if hot == 1000:  # nothing that hot here: the job's own prefix keys, row for row
        assert rows.tolist() == prefix_rows.tolist() and keys.tolist() == prefix_hashes.tolist()
    else:  # pair keys (a mix of two hashes, none of them a hash) replace the hot ones
        assert not set(keys.tolist()) <= set(values.tolist())
