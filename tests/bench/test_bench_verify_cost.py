"""bench.verify_cost: its fingerprints are the library's shingle hashes, and their merge never
counts fewer shared hashes than the exact bottom-256 sample (so truncating to 32 bits can only make
the filter refuse less)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import sample_corpus

from bench.verify_cost import K, fingerprint, refused, sample_counts
from shingling.exact import shingle_set


def exact_sample(a: set[int], b: set[int], k: int) -> tuple[int, int]:
    """(shared, taken) of the bottom-k sample of the union (unsigned order), whole when both sets
    have at most k values."""
    union = sorted(a | b)
    taken = union if len(a) <= k and len(b) <= k else union[:k]
    return sum(1 for h in taken if h in a and h in b), len(taken)


def counts(a: set[int], b: set[int], k: int) -> tuple[int, int]:
    fa = fingerprint(np.array(sorted(a), dtype=np.uint64), k)
    fb = fingerprint(np.array(sorted(b), dtype=np.uint64), k)
    whole = np.array([len(a) <= k and len(b) <= k])
    m, t = sample_counts(
        np.concatenate([fa]), np.array([0, len(fa)]), fb, np.array([0, len(fb)]), whole, k
    )
    return int(m[0]), int(t[0])


def test_a_fingerprint_is_the_top_32_bits_of_the_library_s_smallest_shingle_hashes() -> None:
    for _, text in sample_corpus()[:40]:
        hashes = {h % 2**64 for h in shingle_set(text, width=4)}  # unsigned
        expected = [h >> 32 for h in sorted(hashes)[:K]]
        assert fingerprint(np.array(sorted(hashes), dtype=np.uint64)).tolist() == expected


def test_on_real_text_the_merge_counts_what_the_exact_sample_holds() -> None:
    docs = sample_corpus()[:30]
    sets = [{h % 2**64 for h in shingle_set(t, width=4)} for _, t in docs]
    checked = 0
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            for k in (16, K):
                got, want = counts(sets[i], sets[j], k), exact_sample(sets[i], sets[j], k)
                # distinct 32-bit prefixes here, so equal; the whole case takes the whole union
                assert got == want
                checked += 1
    assert checked > 800


# hashes from a narrow range of top bits: many distinct hashes share their 32-bit prefix
close = st.integers(0, 40).map(lambda top: (top << 32) | 0x5) | st.integers(0, 40).map(
    lambda top: (top << 32) | 0x9
)


@settings(max_examples=300, deadline=None)
@given(
    st.sets(close | st.integers(0, 2**64 - 1), max_size=60),
    st.sets(close | st.integers(0, 2**64 - 1), max_size=60),
    st.sets(close, max_size=30),
    st.sampled_from([4, 8, 16, 64]),
)
def test_truncated_prefixes_never_count_fewer_shared_hashes(
    a: set[int], b: set[int], common: set[int], k: int
) -> None:
    a, b = a | common, b | common
    if not a or not b:
        return
    (m, taken), (m_exact, taken_exact) = counts(a, b, k), exact_sample(a, b, k)
    assert m >= m_exact
    assert taken <= taken_exact
    if len(a) <= k and len(b) <= k:
        # the ratio the whole-set rule compares is never below the exact Jaccard
        assert m * taken_exact >= m_exact * taken


def test_whole_sets_are_refused_exactly_below_the_threshold_and_samples_at_the_cut() -> None:
    matches = np.array([4, 5, 86, 87])
    taken = np.array([10, 10, K, K])
    whole = np.array([True, True, False, False])
    assert refused(matches, taken, whole, cut=86, threshold=0.5).tolist() == [
        True,
        False,
        True,
        False,
    ]
