"""The cost model of docs/scaling.md, computed from result files and checked against them.

    python -m bench.cost_model --scaling bench/results/scaling-T.json \
        --join-work bench/results/join-work-T.json [--join-work ...] [--calibrate 100000,1000000] \
        [--join-work-counts bench/results/join-work-U.json ...] \
        [--verify-cost bench/results/verify-cost-V.json]

A run's time in the job is sketching plus the pair stage:

    sketch(N) = s0 + s N
    pair(N)   = p0 + p N + (r R + t T + u P) / cores + v V

where N is the documents, R the prefix rows of the join, T the pairs its postings test and P the
tests the signatures pass, each then an intersection (all counted by bench/join_work.py from the
run's documents table: they are properties of the corpus and the code; T grows with the square of
the documents that share a hash). r, t and u, the compiled posting loop's CPU per row, per test
and per test passed, are fitted to that loop timed in one process (join_work --time-sample;
without P counted, r and t per mode); s0, s, p0, p to the job's stage times at the calibration sizes (summary.json, from the scaling
bench). V is the candidates verified against their texts (``pairs.verification`` in the run's
summary; none in the estimate-only run), and v a candidate's wall seconds in verification, measured
on its own by bench/verify_cost.py (``--verify-cost``; without it there is no V term, and
verification's cost falls in p N). Every other size is a check: the model's in-job seconds against
the measured ones.
``--join-work-counts`` files give only their counts: their timings, of another version of the
loop, are not checked against the constants.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import nnls

REPO = Path(__file__).resolve().parents[1]
MODES = {"pipeline": "defaults (candidates from 0.3)", "estimate": "estimate-only (0.5)"}


def loop_terms(work: dict[str, Any]) -> list[float]:
    """The loop's work in one mode: prefix rows, pair tests and, where counted, the tests the
    signatures pass (each then a 20-hash intersection)."""
    terms = [float(work["prefix_rows"]), float(work["pair_tests"])]
    if "signature_passes" in work:
        terms.append(float(work["signature_passes"]))
    return terms


def nonnegative_fit(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every constant at least zero (a cost cannot be negative): with four
    timings for three constants, two of whose terms grow together, the unconstrained fit can
    trade a negative cost a test against a larger one a passed test."""
    constants, _ = nnls(a, y)
    return np.asarray(constants, dtype=float)


def fit_loop(by_docs: dict[int, dict[str, Any]], calibrate: list[int]) -> dict[str, np.ndarray]:
    """Per mode, the compiled loop's CPU seconds per unit of each of :func:`loop_terms`, fitted to
    its timings (whole, not sampled) at the calibration sizes. With the signature passes counted,
    one set of three constants for both modes (the same loop, at two thresholds) by least squares,
    none negative, over the four timings; else two constants per mode through its two timings."""
    terms: dict[str, list[list[float]]] = {}
    seconds: dict[str, list[float]] = {}
    for mode in MODES.values():
        terms[mode], seconds[mode] = [], []
        for n in calibrate:
            work = by_docs[n][mode]
            if work.get("timed", {}).get("sample") != "1/1":
                raise SystemExit(
                    f"join_work of {n} documents was not timed whole (--time-sample 1)"
                )
            terms[mode].append(loop_terms(work))
            seconds[mode].append(work["timed"]["cpu_seconds"])
    if all(len(t) == 3 for rows in terms.values() for t in rows):
        a = np.array([t for mode in MODES.values() for t in terms[mode]])
        y = np.array([x for mode in MODES.values() for x in seconds[mode]])
        shared = nonnegative_fit(a, y)
        return {mode: shared for mode in MODES.values()}
    return {
        mode: np.linalg.solve(np.array([t[:2] for t in terms[mode]]), np.array(seconds[mode]))
        for mode in MODES.values()
    }


def line(x: list[float], y: list[float]) -> tuple[float, float]:
    """Intercept and slope through two points."""
    slope = (y[1] - y[0]) / (x[1] - x[0])
    return y[0] - slope * x[0], slope


def verify_seconds(verify_cost: dict[str, Any]) -> float:
    """Wall seconds a candidate costs verification (its joins to the two texts, the hand-over to
    Python and the exact overlap), from a bench/verify_cost.py result.

    >>> verify_seconds({"candidates": 2_000_000, "seconds": {"verify": 20.0}})
    1e-05
    """
    return float(verify_cost["seconds"]["verify"]) / int(verify_cost["candidates"])


def verified(size: dict[str, Any], key: str) -> int:
    """The candidates a run verified against their texts (0 for a run that verifies none)."""
    return int(size[key]["detail"]["pairs"].get("verification", {}).get("candidates_verified", 0))


def model(
    scaling: dict[str, Any],
    work: list[dict[str, Any]],
    calibrate: list[int],
    cores: int,
    verify_s: float = 0.0,
) -> dict[str, Any]:
    by_docs = {w["sketched"]: w for w in work}
    sizes = {s["docs"]: s for s in scaling["sizes"]}
    constants = fit_loop(by_docs, calibrate)
    out: dict[str, Any] = {
        "loop": {
            mode: {
                "ns_per_row": round(c[0] * 1e9, 1),
                "ns_per_test": round(c[1] * 1e9, 1),
                **({"ns_per_passed_test": round(c[2] * 1e9, 1)} if len(c) > 2 else {}),
            }
            for mode, c in constants.items()
        }
    }
    checks = []
    for w in work:  # the loop's constants against the sampled timings they were not fitted to
        for mode in MODES.values():
            timed = w[mode].get("timed")
            if timed and timed["sample"] != "1/1":
                share = int(timed["sample"].split("/")[1])
                c = constants[mode]
                sampled = [w[mode]["prefix_rows"] / share, timed["pair_tests"]]
                if len(c) > 2:
                    sampled.append(timed["signature_passes"])
                predicted = float(np.dot(c, sampled))
                checks.append(
                    {
                        "documents": w["sketched"],
                        "mode": mode,
                        "sample": timed["sample"],
                        "measured_cpu_s": timed["cpu_seconds"],
                        "model_cpu_s": round(predicted, 2),
                    }
                )
    out["loop_checks"] = checks
    rows = []
    for key, mode in MODES.items():
        c = constants[mode]
        loop = {
            n: float(np.dot(c, loop_terms(by_docs[n][mode])[: len(c)])) / cores
            for n in sizes
            if n in by_docs
        }
        stages = {n: sizes[n][key]["detail"]["stage_seconds"] for n in sizes}
        verify = {n: verify_s * verified(sizes[n], key) for n in sizes}
        s0, s = line([float(n) for n in calibrate], [stages[n]["sketch"] for n in calibrate])
        p0, p = line(
            [float(n) for n in calibrate],
            [stages[n]["pairs"] - loop[n] - verify[n] for n in calibrate],
        )
        # the rest of the job (the final count): a constant, its mean at the calibration sizes
        rest = float(
            np.mean(
                [stages[n]["total"] - stages[n]["sketch"] - stages[n]["pairs"] for n in calibrate]
            )
        )
        for n in sorted(loop):
            sketch, pair = s0 + s * n, p0 + p * n + loop[n] + verify[n]
            measured = stages[n]["total"]
            rows.append(
                {
                    "mode": key,
                    "documents": n,
                    "calibration": n in calibrate,
                    "model_sketch_s": round(sketch, 1),
                    "measured_sketch_s": stages[n]["sketch"],
                    "model_pair_s": round(pair, 1),
                    "measured_pair_s": stages[n]["pairs"],
                    "of_which_loop_s": round(loop[n], 1),
                    "of_which_verify_s": round(verify[n], 1),
                    "model_in_job_s": round(sketch + pair + rest, 1),
                    "measured_in_job_s": measured,
                    "error": round((sketch + pair + rest) / measured - 1, 3),
                    "constants": {
                        "s0": round(s0, 2),
                        "s_us": round(s * 1e6, 2),
                        "p0": round(p0, 2),
                        "p_us": round(p * 1e6, 2),
                        "v_us": round(verify_s * 1e6, 2),
                    },
                }
            )
    out["rows"] = rows
    return out


def markdown(result: dict[str, Any], sources: list[str]) -> str:
    loop = "; ".join(
        f"{mode}: {c['ns_per_row']} ns per prefix row, {c['ns_per_test']} ns per pair test"
        + (f", {c['ns_per_passed_test']} ns per test passed" if "ns_per_passed_test" in c else "")
        for mode, c in result["loop"].items()
    )
    lines = [
        f"## Cost model, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"From {', '.join(f'`{s}`' for s in sources)}. The posting loop (CPU), {loop}.",
        "",
        "| loop check | documents | sample | measured CPU s | model CPU s |",
        "|---|---|---|---|---|",
    ]
    for c in result["loop_checks"]:
        lines.append(
            f"| {c['mode'][:13]} | {c['documents']:,} | {c['sample']} | {c['measured_cpu_s']} | "
            f"{c['model_cpu_s']} |"
        )
    lines += [
        "",
        "| run | documents | sketch s model / measured | pair stage s model / measured (loop, "
        "verification) | in job s model / measured | error |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        tag = " (calibration)" if r["calibration"] else ""
        lines.append(
            f"| {r['mode']} | {r['documents']:,}{tag} | {r['model_sketch_s']} / "
            f"{r['measured_sketch_s']} | {r['model_pair_s']} / {r['measured_pair_s']} "
            f"({r['of_which_loop_s']}, {r['of_which_verify_s']}) | {r['model_in_job_s']} / "
            f"{r['measured_in_job_s']} | "
            f"{100 * r['error']:+.0f}% |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.cost_model", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scaling", type=Path, required=True)
    parser.add_argument("--join-work", type=Path, action="append", required=True)
    parser.add_argument(
        "--join-work-counts",
        type=Path,
        action="append",
        default=[],
        help="join_work files read for their counts only (timed with another version of the loop)",
    )
    parser.add_argument(
        "--verify-cost",
        type=Path,
        help="a bench/verify_cost.py result: verification's wall seconds a candidate (the V term)",
    )
    parser.add_argument("--calibrate", default="100000,1000000")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    work = [w for f in args.join_work for w in json.loads(f.read_text())]
    for f in args.join_work_counts:
        for w in json.loads(f.read_text()):
            for mode in MODES.values():
                w[mode].pop("timed", None)
            work.append(w)
    calibrate = [int(n) for n in args.calibrate.split(",")]
    verify_s = verify_seconds(json.loads(args.verify_cost.read_text())) if args.verify_cost else 0.0
    result = model(json.loads(args.scaling.read_text()), work, calibrate, args.cores, verify_s)
    sources = [
        str(args.scaling),
        *map(str, args.join_work),
        *(f"{f} (counts only)" for f in args.join_work_counts),
    ]
    if args.verify_cost:
        sources.append(f"{args.verify_cost} (a candidate verified: {verify_s * 1e6:.1f} us)")
    text = markdown(result, sources)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    (REPO / "bench" / "results" / f"cost-model-{stamp}.json").write_text(
        json.dumps({"sources": sources, **result}, indent=2) + "\n"
    )
    (REPO / "bench" / "results" / f"cost-model-{stamp}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
