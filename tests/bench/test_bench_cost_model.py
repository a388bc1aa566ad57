"""bench.cost_model's fit of the posting loop's constants: least squares with no negative cost."""

from __future__ import annotations

import numpy as np

from bench.cost_model import MODES, fit_loop, model, nonnegative_fit


def test_the_fit_recovers_constants_that_explain_the_timings_exactly() -> None:
    terms = np.array([[9.7e5, 1.5e6, 4.7e5], [1.2e7, 1.4e8, 1.7e7], [6.0e5, 5.2e5, 1.5e5]])
    truth = np.array([400e-9, 5e-9, 700e-9])
    assert np.allclose(nonnegative_fit(terms, terms @ truth), truth, rtol=1e-9)


def test_no_constant_is_negative_where_plain_least_squares_makes_one_so() -> None:
    # the loop's terms (prefix rows, tests, passes) and CPU seconds at 100k and 1M in both modes,
    # as join_work timed them on 2026-12-07: tests and passes grow together, and the
    # unconstrained fit buys a smaller residual with a negative cost a test
    terms = np.array(
        [
            [9.7e5, 1.54e6, 4.7e5],
            [1.16e7, 1.40e8, 1.67e7],
            [6.0e5, 5.2e5, 1.5e5],
            [7.9e6, 5.4e7, 1.6e6],
        ]
    )
    timings = np.array([0.81, 14.98, 0.18, 3.57])
    plain, *_ = np.linalg.lstsq(terms, timings, rcond=None)
    assert plain.min() < 0
    fitted = nonnegative_fit(terms, timings)
    assert fitted.min() >= 0
    # and no non-negative choice explains the timings better: each constant nudged up or down
    # (where it stays non-negative) only adds to the residual
    best = np.linalg.norm(terms @ fitted - timings)
    for i in range(3):
        for step in (-1e-3, 1e-3):
            other = fitted.copy()
            other[i] = max(0.0, other[i] + step)
            assert np.linalg.norm(terms @ other - timings) >= best - 1e-12


def test_one_set_of_constants_for_both_modes_from_the_timed_loop() -> None:
    truth = np.array([300e-9, 2e-9, 600e-9])
    by_docs = {}
    for n, (rows, tests, passes) in {
        100_000: (9.7e5, 1.5e6, 4.7e5),
        1_000_000: (1.2e7, 1.4e8, 1.7e7),
    }.items():
        by_docs[n] = {}
        for scale, mode in zip((1.0, 0.6), MODES.values(), strict=True):
            work = {
                "prefix_rows": rows * scale,
                "pair_tests": tests * scale * scale,
                "signature_passes": passes * scale**3,
            }
            terms = np.array([work["prefix_rows"], work["pair_tests"], work["signature_passes"]])
            work["timed"] = {"sample": "1/1", "cpu_seconds": float(terms @ truth)}
            by_docs[n][mode] = work
    constants = fit_loop(by_docs, [100_000, 1_000_000])
    for mode in MODES.values():
        assert np.allclose(constants[mode], truth, rtol=1e-6)


def synthetic(verify_s: float) -> tuple[dict, list[dict]]:
    """A scaling result and join_work counts made by the model itself, with a verification term."""
    loop = np.array([300e-9, 2e-9, 600e-9])
    sizes, work = [], []
    for n in (100_000, 1_000_000, 10_000_000):
        entry: dict = {"docs": n}
        counts: dict = {"sketched": n}
        for key, mode in MODES.items():
            defaults = key == "pipeline"
            terms = np.array([10.0 * n, 15.0 * n * n / 1e5, 3.0 * n * n / 1e5])
            terms = terms if defaults else terms / 2
            counts[mode] = {
                "prefix_rows": terms[0],
                "pair_tests": terms[1],
                "signature_passes": terms[2],
                "timed": {"sample": "1/1", "cpu_seconds": float(terms @ loop)},
            }
            # the candidates verified grow faster than the documents, as on the bench's recipe
            candidates = int(0.2 * n * (n / 1e5) ** 0.5) if defaults else 0
            sketch, pairs = 9.0 + 18e-6 * n, 10.0 + 50e-6 * n + float(terms @ loop) / 2
            pairs += verify_s * candidates
            detail = {"candidates_verified": candidates} if defaults else None
            entry[key] = {
                "detail": {
                    "stage_seconds": {"sketch": sketch, "pairs": pairs, "total": sketch + pairs},
                    "pairs": {"verification": detail} if detail else {},
                }
            }
        sizes.append(entry)
        work.append(counts)
    return {"sizes": sizes}, work


def test_a_verification_term_in_the_candidates_predicts_the_larger_size_exactly() -> None:
    scaling, work = synthetic(verify_s=10e-6)
    with_term = model(scaling, work, [100_000, 1_000_000], cores=2, verify_s=10e-6)
    rows = {(r["mode"], r["documents"]): r for r in with_term["rows"]}
    for mode in MODES:
        assert abs(rows[mode, 10_000_000]["error"]) < 1e-3
    assert rows["pipeline", 10_000_000]["of_which_verify_s"] > 0
    assert rows["estimate", 10_000_000]["of_which_verify_s"] == 0
    # without it, verification's cost is taken as linear in the documents: the check is off
    without = model(scaling, work, [100_000, 1_000_000], cores=2)
    off = {(r["mode"], r["documents"]): r["error"] for r in without["rows"]}
    assert off["pipeline", 10_000_000] < -0.05
    assert abs(off["estimate", 10_000_000]) < 1e-3
