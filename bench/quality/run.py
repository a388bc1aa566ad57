"""``make bench-quality``: every runner on each real corpus, against the exact truth.

    python -m bench.quality.run [--corpora short,long,boilerplate] [--only defaults,estimate,...]

Per corpus, in one invocation: build (or load) the corpus (:mod:`bench.quality.corpora`), compute
the exact truth (:mod:`bench.quality.exact`) and check it against a brute force on a sample, run
every runner one after another (each its own process, timed end to end, as ``make bench`` does),
then precision, recall and F1 at J >= 0.5 and J >= 0.8, each method cut by its own score, and at
containment >= 0.8 for the shingling runs. Tables go to the terminal and to
``bench/results/quality-<UTC time>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
import zipfile
from dataclasses import asdict
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds

from bench.quality.corpora import QUALITY_WORK, SPECS, Corpus, build
from bench.quality.exact import ExactTruth, check_sample, compute, overlaps
from bench.quality.metrics import LEVELS, evaluate
from bench.run import (
    BIN,
    REPO,
    ZIP,
    Run,
    _f,
    last_json,
    machine,
    measure,
    pipeline_cmd,
    spark_cores,
    spark_submit,
    warm_up,
    write_results,
    zip_is_current,
)

RUNNERS = ("defaults", "estimate", "containment", "datasketch", "rensa", "mllib")
SHINGLING = ("defaults", "estimate", "containment")
LABELS = {
    "defaults": "shingling, defaults",
    "estimate": "shingling, estimate only (pairs.verify=false)",
    "containment": "shingling, containment mode (sketch.sample_mod=32)",
    "datasketch": "datasketch MinHashLSH (128 perm, threshold 0.5)",
    "rensa": "rensa RMinHashLSH (128 perm, 32 bands x 4)",
    "mllib": "Spark MLlib MinHashLSH (5 tables, distance 0.5)",
}
JACCARD_BINS = np.round(np.arange(0.3, 1.01, 0.1), 1)
CONTAINMENT_LEVEL = 0.8


def job_has_verify(zip_path: Path = ZIP) -> bool:
    """Whether the job knows ``pairs.verify`` (exact verification of every candidate): read from
    the defaults packed in dist/shingling.zip, which is what spark-submit runs (jobs/default.toml
    when there is no zip)."""
    if zip_path.exists():
        with zipfile.ZipFile(zip_path) as packed:
            text = packed.read("jobs/default.toml").decode()
    else:
        text = (REPO / "jobs" / "default.toml").read_text()
    return "verify" in tomllib.loads(text).get("pairs", {})


def runner_cmd(
    name: str, corpus: Corpus, out: Path, args: argparse.Namespace
) -> tuple[list[str], Path, int]:
    """(command, where its pairs land, cores it uses)."""
    dm = args.driver_memory
    if name in SHINGLING:
        settings = {
            "defaults": [],
            "estimate": ["pairs.verify=false"] if job_has_verify() else [],
            "containment": ["sketch.sample_mod=32"],
        }[name]
        return (
            pipeline_cmd(corpus.path, out / name, settings, dm),
            out / name / "pairs",
            spark_cores(),
        )
    if name == "mllib":
        target = out / "mllib-pairs"
        cmd = spark_submit(
            "bench/peers/mllib_minhash.py",
            ["--input", str(corpus.path), "--output", str(target), "--distance", "0.5"],
            dm,
            True,
        )
        return cmd, target, spark_cores()
    module = {"datasketch": "bench.peers.datasketch_scored", "rensa": "bench.peers.rensa_lsh"}[name]
    target = out / f"{name}-pairs.parquet"
    return (
        [str(BIN / "python"), "-m", module, "--input", str(corpus.path), "--output", str(target)],
        target,
        1,
    )


def read_scored(name: str, path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pairs (m, 2), Jaccard scores, containment scores or NaN) of a runner's output."""
    dataset = ds.dataset(path, format="parquet")
    cols = set(dataset.schema.names)
    want = ["doc_a", "doc_b"] + [
        c for c in ("jaccard", "distance", "containment_a", "containment_b") if c in cols
    ]
    t = dataset.to_table(columns=want)
    pairs = np.stack([t["doc_a"].to_numpy(), t["doc_b"].to_numpy()], axis=1).astype(np.int64)
    pairs = np.sort(pairs, axis=1)
    if "distance" in cols:
        jac = 1.0 - t["distance"].to_numpy(zero_copy_only=False)
    else:
        jac = t["jaccard"].to_numpy(zero_copy_only=False).astype(np.float64)
    if "containment_a" in cols:
        cont = np.maximum(
            t["containment_a"].to_numpy(zero_copy_only=False),
            t["containment_b"].to_numpy(zero_copy_only=False),
        ).astype(np.float64)
    else:
        cont = np.full(len(pairs), np.nan)
    return pairs, jac, cont


def outside_truth(truth: ExactTruth, pairs: np.ndarray) -> dict:
    """Reported pairs of distinct texts the truth does not hold: their exact Jaccard and
    containment, computed here (the join is exhaustive, so both must be below its floors)."""
    rep = truth.groups.rep
    n = np.int64(truth.n)
    a, b = rep[pairs[:, 0]], rep[pairs[:, 1]]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    codes = np.unique(lo[keep] * n + hi[keep])
    codes = codes[~np.isin(codes, truth.pairs.codes(truth.n))]
    a, b = codes // n, codes % n
    o = overlaps(truth.sets, a, b)
    sa, sb = truth.sets.sizes[a], truth.sets.sizes[b]
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.where(sa + sb - o > 0, o / (sa + sb - o), 0.0)
        c = np.where(np.minimum(sa, sb) > 0, o / np.minimum(sa, sb), 0.0)
    return {
        "pairs": int(len(codes)),
        "max_jaccard": float(j.max()) if len(j) else None,
        "max_containment": float(c.max()) if len(c) else None,
    }


def truth_summary(truth: ExactTruth) -> dict:
    j, c = truth.pairs.jaccard, truth.pairs.containment
    bins = np.histogram(j[j >= 0.3], bins=JACCARD_BINS)[0].tolist()
    return {
        "documents": truth.n,
        "distinct_texts": int(len(truth.representatives())),
        "copies": truth.groups.copies,
        "groups_with_copies": int(len(np.unique(truth.groups.rep[truth.groups.size > 1]))),
        "largest_group": int(truth.groups.size.max()) if truth.n else 0,
        "groups_over_100": int(len(np.unique(truth.groups.rep[truth.groups.size > 100]))),
        "pairs_jaccard_0.3": int((j >= 0.3).sum()),
        "pairs_jaccard_0.5": int((j >= 0.5).sum()),
        "pairs_jaccard_0.8": int((j >= 0.8).sum()),
        "pairs_containment_0.8": int((c >= CONTAINMENT_LEVEL).sum()),
        "pairs_containment_0.8_jaccard_below_0.3": int(
            ((c >= CONTAINMENT_LEVEL) & (j < 0.3)).sum()
        ),
        "jaccard_bins": {
            f"{lo:.1f}-{hi:.1f}": n
            for lo, hi, n in zip(JACCARD_BINS[:-1], JACCARD_BINS[1:], bins, strict=True)
        },
        "join": truth.pairs.stats,
        "seconds": truth.seconds,
    }


def run_corpus(name: str, args: argparse.Namespace) -> dict:
    started = time.monotonic()
    corpus = build(name, rebuild=args.rebuild)
    work = corpus.path.parent
    print(f"[quality] {name}: exact truth", flush=True)
    t0 = time.monotonic()
    truth = compute(corpus.path, work)
    described = truth_summary(truth)
    described["check"] = check_sample(truth, args.check_sample, seed=7)
    described["seconds"]["total"] = round(time.monotonic() - t0, 1)
    print(
        f"[quality] {name}: {described['pairs_jaccard_0.3']:,} pairs at J >= 0.3, "
        f"{described['pairs_containment_0.8']:,} at containment >= 0.8, "
        f"in {described['seconds']['total']} s; brute force on {described['check']['documents']} "
        f"documents agrees: {described['check']['agree']}",
        flush=True,
    )
    truth_codes = truth.pairs.codes(truth.n)
    results: dict[str, dict] = {}
    runs: list[Run] = []
    out = QUALITY_WORK / "runs" / work.name
    out.mkdir(parents=True, exist_ok=True)
    for runner in args.only:
        cmd, target, cores = runner_cmd(runner, corpus, out, args)
        log = out / f"{runner}.log"
        print(f"[quality] {name}: {runner} ({LABELS[runner]})", flush=True)
        status, wall, peak = measure(cmd, log, args.timeout)
        run = Run(runner, status, wall, peak, cores, target if status == "ok" else None)
        print(f"[quality] {name}: {runner} {status} in {wall:.1f} s", flush=True)
        if status != "ok":
            run.detail = {
                "log": str(log.relative_to(REPO)),
                "tail": log.read_text(errors="replace")[-1500:],
            }
            runs.append(run)
            continue
        run.detail = last_json(log) if runner not in SHINGLING else {}
        if runner in SHINGLING:
            summary = json.loads((out / runner / "summary.json").read_text())
            run.detail = {
                "stage_seconds": summary.get("stage_seconds"),
                "pairs": summary.get("pairs"),
            }
        pairs, jac, cont = read_scored(runner, target)
        quality = evaluate(pairs, jac, truth.groups, truth_codes, truth.pairs.jaccard)
        quality["outside_truth"] = outside_truth(truth, pairs)
        if runner in SHINGLING:
            quality["containment"] = evaluate(
                pairs,
                cont,
                truth.groups,
                truth_codes,
                truth.pairs.containment,
                (CONTAINMENT_LEVEL,),
            )["levels"][0]
        results[runner] = quality
        runs.append(run)
    return {
        "corpus": corpus.meta,
        "truth": described,
        "runs": [asdict(r) for r in runs],
        "quality": results,
        "seconds_end_to_end": round(time.monotonic() - started, 1),
    }


def corpus_markdown(data: dict) -> str:
    m, t = data["corpus"], data["truth"]
    bins = " | ".join(str(v) for v in t["jaccard_bins"].values())
    head = " | ".join(t["jaccard_bins"])
    check = t["check"]
    lines = [
        f"### {m['name']}: {m['what']}",
        f"{m['documents']:,} documents, {m['text_bytes'] / 1e6:.1f} MB (mean {m['mean_doc_bytes']:.0f} bytes), "
        f"digest `{m['digest']}`; {t['distinct_texts']:,} distinct texts, {t['copies']:,} exact copies in "
        f"{t['groups_with_copies']:,} groups (largest {t['largest_group']}, {t['groups_over_100']} over 100). "
        f"Truth: {t['pairs_jaccard_0.3']:,} pairs at J ≥ 0.3, {t['pairs_jaccard_0.5']:,} at 0.5, "
        f"{t['pairs_jaccard_0.8']:,} at 0.8; {t['pairs_containment_0.8']:,} at containment ≥ 0.8 "
        f"({t['pairs_containment_0.8_jaccard_below_0.3']:,} of them below J 0.3). Exact join "
        f"{t['join']['candidates']:,} candidates in {t['seconds']['total']} s (shingle sets "
        f"{t['seconds']['shingle_sets']} s); brute force over {check['documents']} documents "
        f"({check['pairs_checked']:,} pairs, {check['brute_force_pairs']:,} at the floors): "
        f"{'agrees' if check['agree'] else 'DISAGREES'} with the join.",
        "",
        f"| truth pairs by exact J | {head} |",
        "|" + "---|" * (1 + len(t["jaccard_bins"])),
        f"| pairs of distinct texts | {bins} |",
        "",
        "| runner | wall s | pairs | P J≥0.5 | R J≥0.5 | F1 J≥0.5 | P J≥0.8 | R J≥0.8 | F1 J≥0.8 | copies linked | reported below J 0.3 |",
        "|" + "---|" * 11,
    ]
    by_name = {r["name"]: r for r in data["runs"]}
    for name, run in by_name.items():
        q = data["quality"].get(name)
        wall = f"{run['wall']:.1f}" if run["wall"] is not None else "–"
        if q is None:
            lines.append(f"| {LABELS[name]} | {wall} ({run['status']}) |" + " – |" * 9)
            continue
        cells = []
        for lv in q["levels"]:
            cells += [_f(lv["precision"], 3), _f(lv["recall"], 3), _f(lv["f1"], 3)]
        lines.append(
            f"| {LABELS[name]} | {wall} | {q['reported']:,} | {' | '.join(cells)} | "
            f"{_f(q['copies_linked'], 3)} | {q['outside_truth']['pairs']:,} |"
        )
    shingling = [n for n in by_name if n in SHINGLING and n in data["quality"]]
    if shingling:
        lines += [
            "",
            "| shingling run, cut at max(containment_a, containment_b) ≥ 0.8 | pairs | truth | precision | recall | F1 |",
            "|---|---|---|---|---|---|",
        ]
        for n in shingling:
            c = data["quality"][n]["containment"]
            lines.append(
                f"| {LABELS[n]} | {c['reported']:,} | {c['truth']:,} | {_f(c['precision'], 3)} | "
                f"{_f(c['recall'], 3)} | {_f(c['f1'], 3)} |"
            )
    lines += ["", f"End to end (corpus, truth, every runner): {data['seconds_end_to_end']:.0f} s."]
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.quality", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora", default=",".join(SPECS), help=f"comma-separated (default: {','.join(SPECS)})"
    )
    parser.add_argument(
        "--only",
        default=",".join(RUNNERS),
        help=f"comma-separated runners (default: {','.join(RUNNERS)})",
    )
    parser.add_argument(
        "--timeout", type=float, default=1200, help="seconds per runner before it is killed"
    )
    parser.add_argument(
        "--driver-memory", help="spark-submit --driver-memory for every Spark runner"
    )
    parser.add_argument(
        "--check-sample", type=int, default=300, help="documents of the brute-force check"
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild the corpora")
    args = parser.parse_args(argv)
    args.corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    args.only = [r.strip() for r in args.only.split(",") if r.strip()]
    for given, known in ((args.corpora, SPECS), (args.only, RUNNERS)):
        unknown = sorted(set(given) - set(known))
        if unknown:
            parser.error(f"unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if set(args.only) & set(SHINGLING) and not zip_is_current():
        return 2
    before = machine()
    if set(args.only) & set(SHINGLING):
        warm_up(argparse.Namespace(driver_memory=args.driver_memory, timeout=args.timeout))
    data = {name: run_corpus(name, args) for name in args.corpora}
    after = machine()
    verify = job_has_verify()
    parts = [
        f"## Quality on real text, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "Pairs of distinct normalized texts (doc_a < doc_b; exact copies grouped, scored as copies "
        "linked); each method cut at the level by its own score; truth exact (docs/quality.md). "
        + (
            "The job verifies candidates by default (pairs.verify)."
            if verify
            else "This job has no pairs.verify: 'defaults' and 'estimate only' run the same settings."
        ),
        *(corpus_markdown(d) for d in data.values()),
        f"Machine: {after['cpu']}, {after['cores']} cores, Spark local[{after['spark_cores']}], "
        f"pyspark {after['pyspark']}, datasketch {after['datasketch']}, commit {after['commit']}; "
        f"load average {before['load_average']} before, {after['load_average']} after.",
    ]
    markdown = "\n\n".join(parts)
    print("\n" + markdown)
    path = write_results(
        "quality",
        markdown,
        {
            "corpora": data,
            "job_has_verify": verify,
            "rensa": version("rensa"),
            "machine_before": before,
            "machine_after": after,
            "argv": sys.argv[1:],
            "levels": LEVELS,
        },
    )
    print(f"\n[quality] written {path.relative_to(REPO)} and .json")
    ok = all(r["status"] == "ok" for d in data.values() for r in d["runs"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
