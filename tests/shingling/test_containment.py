"""Containment mode: mod-m sketches and the containment estimate |A ∩ B| / |A|.

Properties on random text (hypothesis), then the estimator's statistics on real text: passages of a
long document of Python docstrings, lightly edited and wrapped in licence text, whose exact
containment is measured on the full shingle sets.
"""

from __future__ import annotations

import ast
import math
import random
import statistics
import sysconfig
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import (
    NON_EMPTY_DOCUMENT,
    WORDY_TEXT,
    licence_texts,
    light_edits,
    overlapping_pair,
)

from shingling.estimators import containment, jaccard, matches
from shingling.hashing import to_unsigned
from shingling.normalize import words
from shingling.sketch import Sketch, sample_bound, shingle_hashes, sketch, tokens

K = st.integers(min_value=1, max_value=40)
MOD = st.integers(min_value=1, max_value=64)
WIDTH = st.integers(min_value=1, max_value=6)


def shingle_set(text: str, width: int = 4, unit: str = "words") -> set[int]:
    return set(shingle_hashes(tokens(text, unit), width))


# --- the mod-m sketch ----------------------------------------------------------------------------


def test_sample_bound_cuts_one_mth_of_the_hash_space() -> None:
    for m in (1, 2, 3, 16, 64, 1000):
        bound = sample_bound(m)
        assert bound is not None
        # signed hashes below the bound are the unsigned offsets 0 .. 2^64 // m - 1 from INT64_MIN
        assert to_unsigned(bound) ^ (1 << 63) == (1 << 64) // m or m == 1
    assert sample_bound(0) is None
    with pytest.raises(ValueError, match="sample_mod"):
        sample_bound(-1)


@settings(deadline=None)
@given(NON_EMPTY_DOCUMENT, WIDTH, K, MOD)
def test_mod_m_sketch_is_the_bottom_k_plus_every_hash_below_the_bound(
    text: str, width: int, k: int, m: int
) -> None:
    full = sorted(shingle_set(text, width))
    if not full:
        return
    plain, sampled = sketch(text, width=width, k=k), sketch(text, width=width, k=k, sample_mod=m)
    bound = sample_bound(m)
    assert sampled.hashes[:k] == plain.hashes == plain.bottom == sampled.bottom
    assert set(sampled.hashes) == set(full[:k]) | {h for h in full if h < bound}
    assert sampled.hashes == tuple(full[: len(sampled.hashes)])  # a prefix of the sorted hashes
    assert sampled.n_shingles == plain.n_shingles == len(full)


@settings(deadline=None)
@given(overlapping_pair(), K, MOD)
def test_resemblance_is_the_same_in_both_modes(pair: tuple[str, str], k: int, m: int) -> None:
    a, b = pair
    if not words(a) or not words(b):
        return
    pa_, pb_ = sketch(a, k=k), sketch(b, k=k)
    ma_, mb_ = sketch(a, k=k, sample_mod=m), sketch(b, k=k, sample_mod=m)
    assert jaccard(ma_, mb_) == jaccard(pa_, pb_)
    assert matches(ma_, mb_) == matches(pa_, pb_)


def test_sketch_size_grows_as_length_over_m() -> None:
    # one real long text cut at growing lengths: the sample below the bound is Binomial(n, 1/m)
    text = " ".join(docstring_words()[:30_000])
    m, k = 32, 20
    seen = []
    for n_words in (100, 500, 2_000, 8_000, 30_000):
        s = sketch(" ".join(text.split()[:n_words]), k=k, sample_mod=m)
        expected = s.n_shingles / m
        below = sum(1 for h in s.hashes if h < sample_bound(m))
        assert abs(below - expected) <= 4 * math.sqrt(expected) + 1, (n_words, below, expected)
        assert len(s.hashes) == max(below, min(k, s.n_shingles))
        seen.append(len(s.hashes))
    assert seen[0] == k and seen[-1] > 20 * k  # short texts keep k hashes, long ones ~ n / m
    assert seen == sorted(seen)


# --- properties of the containment estimate ------------------------------------------------------


@settings(deadline=None)
@given(overlapping_pair(), K, st.sampled_from([0, 1, 2, 4, 16]))
def test_containment_is_a_share_in_the_unit_interval(pair: tuple[str, str], k: int, m: int) -> None:
    a, b = pair
    if not words(a) or not words(b):
        return
    sa, sb = sketch(a, k=k, sample_mod=m), sketch(b, k=k, sample_mod=m)
    for x, y in ((sa, sb), (sb, sa)):
        c = containment(x, y)
        assert 0.0 <= c <= 1.0
    assert containment(sa, sa) == 1.0


@st.composite
def text_and_passage(draw: st.DrawFn) -> tuple[str, str]:
    """A text and a run of its words of at least 4 words (so its shingles are the text's)."""
    text = draw(WORDY_TEXT)
    found = words(text)
    if len(found) < 4:
        return text, ""
    start = draw(st.integers(min_value=0, max_value=len(found) - 4))
    end = draw(st.integers(min_value=start + 4, max_value=len(found)))
    return text, " ".join(found[start:end])


@settings(deadline=None)
@given(text_and_passage(), K, st.sampled_from([0, 1, 3, 8]))
def test_a_passage_of_b_is_wholly_contained_in_b(pair: tuple[str, str], k: int, m: int) -> None:
    b, a = pair
    if not a:
        return
    sa, sb = sketch(a, k=k, sample_mod=m), sketch(b, k=k, sample_mod=m)
    assert shingle_set(a) <= shingle_set(b)
    bound = min(
        math.inf if sa.is_complete else sa.hashes[-1], math.inf if sb.is_complete else sb.hashes[-1]
    )
    # every hash of A that B's sketch can speak for is in it; with none, the estimate has no sample
    expected = 1.0 if any(h <= bound for h in sa.hashes) else 0.0
    assert containment(sa, sb) == expected
    if sa.is_complete and sb.is_complete:
        assert containment(sa, sb) == 1.0


@settings(deadline=None)
@given(overlapping_pair(), WIDTH, st.sampled_from([0, 1, 5]))
def test_containment_is_exact_when_both_sketches_are_whole_sets(
    pair: tuple[str, str], width: int, m: int
) -> None:
    a, b = pair
    full_a, full_b = shingle_set(a, width), shingle_set(b, width)
    if not full_a or not full_b:
        return
    k = max(len(full_a), len(full_b))
    sa, sb = sketch(a, width=width, k=k, sample_mod=m), sketch(b, width=width, k=k, sample_mod=m)
    assert sa.is_complete and sb.is_complete
    assert containment(sa, sb) == len(full_a & full_b) / len(full_a)
    assert containment(sb, sa) == len(full_a & full_b) / len(full_b)


def test_sketches_of_different_modes_are_refused() -> None:
    text = licence_texts()["BSD"]
    with pytest.raises(ValueError, match="different settings"):
        containment(sketch(text, sample_mod=16), sketch(text, sample_mod=32))
    with pytest.raises(ValueError, match="different settings"):
        containment(sketch(text), sketch(text, sample_mod=16))
    with pytest.raises(ValueError, match="different settings"):
        containment(sketch(text, unit="chars"), sketch(text))
    with pytest.raises(ValueError, match="empty sketch"):
        containment(Sketch((), n_shingles=0, width=4, k=20), sketch(text))


# --- the estimate's statistics on real excerpts ---------------------------------------------------


@cache
def docstring_words() -> list[str]:
    """Words of the docstrings of Python's standard library, module by module in sorted order."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docs: list[str] = []
    size = 0
    for path in sorted(stdlib.glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    docs.append(doc)
                    size += doc.count(" ")
        if size > 45_000:
            break
    return words("\n\n".join(docs))


def excerpt_estimates(m: int, n: int = 40, seed: int = 5) -> list[tuple[float, float, int]]:
    """(exact containment of A in B, estimate, sample size) for excerpts A of a 20k-word text B.

    A is a 1,000-word passage of B with 0.5-3% of its words edited, between 0 and 1,500 words of
    licence text: its containment in B spans about 0.35 to 0.98.
    """
    rng = random.Random(seed)
    source = docstring_words()
    filler = [w for t in licence_texts().values() for w in words(t)]
    b_words = source[:20_000]
    sb = sketch(" ".join(b_words), sample_mod=m)
    full_b = set(shingle_hashes(b_words))
    out = []
    for _ in range(n):
        start = rng.randrange(len(b_words) - 1_000)
        passage = light_edits(b_words[start : start + 1_000], rng.uniform(0.005, 0.03), filler, rng)
        extra = rng.randrange(0, 1_500)
        cut = rng.randrange(len(filler) - extra)
        before = rng.randrange(extra + 1)
        a_words = filler[cut : cut + before] + passage + filler[cut + before : cut + extra]
        full_a = set(shingle_hashes(a_words))
        sa = sketch(" ".join(a_words), sample_mod=m)
        bound = min(sa.hashes[-1], sb.hashes[-1])
        out.append(
            (
                len(full_a & full_b) / len(full_a),
                containment(sa, sb),
                sum(h <= bound for h in sa.hashes),
            )
        )
    return out


@pytest.mark.parametrize("m", [16, 64])
def test_containment_estimate_of_excerpts_is_within_its_sampling_error(m: int) -> None:
    found = excerpt_estimates(m)
    exact = [c for c, _, _ in found]
    assert min(exact) < 0.5 and max(exact) > 0.9  # the excerpts span the range
    # the estimate is a share of a sample of A's shingles, drawn without replacement: its
    # standard error is at most sqrt(c (1 - c) / n) for a sample of n hashes
    z = [(est - c) / math.sqrt(max(c * (1 - c), 0.02) / n) for c, est, n in found]
    assert max(abs(x) for x in z) <= 4.0, sorted(z)
    assert statistics.fmean(abs(x) <= 2 for x in z) >= 0.85
    # no systematic error: the mean error within four standard errors of a mean of these
    # estimates, derived from the sample drawn (the text behind it depends on the machine's
    # packages); an estimator of another quantity (Jaccard, say) is off by 0.2 and more
    bias = statistics.fmean(est - c for c, est, _ in found)
    se_mean = math.sqrt(sum(max(c * (1 - c), 0.02) / n for c, _, n in found)) / len(found)
    assert abs(bias) <= 4 * se_mean, f"mean bias {bias:+.4f}, standard error {se_mean:.4f}"
    assert 4 * se_mean < 0.1  # the bound still tells a bias of 0.1 apart
    # a passage of 1,000 to 2,500 words leaves about that many shingles over m in the sample
    assert statistics.fmean(n for _, _, n in found) >= 1_000 / m


def test_smaller_m_gives_a_sharper_estimate() -> None:
    errors = {
        m: statistics.fmean(abs(est - c) for c, est, _ in excerpt_estimates(m)) for m in (16, 64)
    }
    assert errors[16] < errors[64], errors
