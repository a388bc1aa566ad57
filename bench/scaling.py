"""Does the cost grow linearly? The scan floor and the pipeline over corpora of growing size.

    python -m bench.scaling --docs 10000,100000,1000000 [--no-skew] [--driver-memory 6g]

One invocation: for each size, the benchmark corpus of that size (bench/corpus.py, same seed, same
proportions of families, copies and boilerplate), the scan floor and the pipeline with default
settings, each a whole spark-submit process (bench/run.py's runners, after its untimed warm-up).
The table gives the time per document, whole process and in the job (the pipeline's own stage
times, without JVM start-up), the in-job time per document added since the previous size (where
fixed costs cancel out: linear cost keeps it flat, a quadratic join makes it grow with the size),
and the pairs written. Written to
``bench/results/scaling-<time>.md`` and ``.json``. Quality is the main bench's (bench/run.py).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from datetime import UTC, datetime

from bench.corpus import WORK, CorpusSpec, build
from bench.run import (
    REPO,
    Run,
    _f,
    machine,
    machine_line,
    run_one,
    warm_up,
    write_results,
    zip_is_current,
)


def per_document(seconds: float | None, docs: int) -> str:
    """Microseconds per document."""
    return "–" if seconds is None else f"{seconds / docs * 1e6:.0f}"


def scaling_table(rows: list[tuple[int, float, Run, Run, Run | None]]) -> str:
    """One line per corpus size: the floor, the pipeline (and its estimate-only run), per document."""
    estimates = any(e is not None for *_, e in rows)
    lines = [
        "| documents | MB of text | scan floor s | shingling s | × scan floor | in-job s "
        "| µs/doc whole | µs/doc in job | µs/doc added | scan µs/doc | pairs written |"
        + (
            " estimate-only s | estimate × scan floor | shingling ÷ estimate-only |"
            if estimates
            else ""
        ),
        "|" + "---|" * (14 if estimates else 11),
    ]
    previous: tuple[int, float] | None = None
    for docs, mb, scan, pipe, estimate in rows:
        stages = pipe.detail.get("stage_seconds") or {}
        in_job = stages.get("total")
        ok = pipe.status == "ok" and scan.status == "ok"
        ratio = _f(pipe.wall / scan.wall, 2) if ok and pipe.wall and scan.wall else "–"
        written = (pipe.detail.get("pairs") or {}).get("written", "–")
        # the cost of the documents this size adds to the previous one: fixed costs cancel out
        added = "–"
        if previous is not None and in_job is not None and docs > previous[0]:
            added = per_document(in_job - previous[1], docs - previous[0])
        previous = (docs, in_job) if in_job is not None else None
        line = (
            f"| {docs:,} | {mb:.0f} | {_f(scan.wall, 1)} | {_f(pipe.wall, 1)} | {ratio} "
            f"| {_f(in_job, 1)} | {per_document(pipe.wall, docs)} | {per_document(in_job, docs)} "
            f"| {added} | {per_document(scan.wall, docs)} | {written} |"
        )
        if estimates:
            e_ok = estimate is not None and estimate.status == "ok" and estimate.wall
            line += (
                f" {_f(estimate.wall, 1) if estimate else '–'} "
                f"| {_f(estimate.wall / scan.wall, 2) if e_ok and scan.wall else '–'} "
                f"| {_f(pipe.wall / estimate.wall, 2) if e_ok and pipe.wall else '–'} |"
            )
        lines.append(line)
    return "\n".join(lines)


def scaling(args: argparse.Namespace) -> int:
    before = machine()
    warm_up(args)
    rows = []
    for docs in args.docs:
        spec = CorpusSpec(
            docs=docs, seed=args.seed, skew=args.skew, dense=args.dense, hostile=args.hostile
        )
        corpus = build(spec)
        out = WORK / "runs" / corpus.path.parent.name
        scan = run_one("scan", corpus, out, args)
        pipe = (
            run_one("pipeline", corpus, out, args) if args.pipeline else Run("pipeline", "skipped")
        )
        estimate = run_one("estimate", corpus, out, args) if args.with_estimate else None
        rows.append((docs, corpus.text_bytes / 1e6, scan, pipe, estimate))
    m = machine()
    kind = ("skewed" if args.skew else "clean") + (", pair-denser recipe" if args.dense else "")
    kind += ", hostile recipe" if args.hostile else ""
    markdown = "\n\n".join(
        [
            f"## Scaling: {', '.join(f'{d:,}' for d in args.docs)} documents ({kind}), "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            scaling_table(rows),
            machine_line(before, m),
        ]
    )
    print("\n" + markdown)
    data = {
        "sizes": [
            {
                "docs": d,
                "text_mb": mb,
                "scan": asdict(s),
                "pipeline": asdict(p),
                "estimate": asdict(e) if e else None,
            }
            for d, mb, s, p, e in rows
        ],
        "machine_before": before,
        "machine_after": m,
        "argv": sys.argv[1:],
    }
    path = write_results("scaling", markdown, data)
    print(f"\n[bench] written {path.relative_to(REPO)} and .json")
    wanted = ("ok",) if args.pipeline else ("ok", "skipped")
    return 0 if all(s.status == "ok" and p.status in wanted for _, _, s, p, _ in rows) else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.scaling", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--docs",
        default="10000,100000,1000000",
        help="comma-separated corpus sizes (default 10000,100000,1000000)",
    )
    parser.add_argument("--seed", type=int, default=42, help="corpus seed (default 42)")
    parser.add_argument("--skew", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--dense", action="store_true", help="the pair-denser recipe")
    parser.add_argument("--hostile", action="store_true", help="the recipe built to hurt")
    parser.add_argument(
        "--pipeline",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the default job at each size (--no-pipeline with --with-estimate: the scan floor"
        " and the estimate-only job only)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per runner")
    parser.add_argument("--driver-memory", help="spark-submit --driver-memory for every runner")
    parser.add_argument(
        "--with-estimate",
        action="store_true",
        help="also the estimate-only run (pairs.verify=false) at each size",
    )
    args = parser.parse_args(argv)
    args.docs = [int(d) for d in args.docs.split(",") if d.strip()]
    args.set = []  # run_one's pipeline settings: the defaults
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not zip_is_current():
        return 2
    return scaling(args)


if __name__ == "__main__":
    sys.exit(main())
