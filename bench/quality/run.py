"""``make bench-quality``: every runner on each real corpus, against the exact truth.

    python -m bench.quality.run [--corpora short,long,boilerplate] [--only defaults,estimate,...]
    python -m bench.quality.run --only dedup     the defaults pair job and the dedup job alone

Per corpus, in one invocation: build (or load) the corpus (:mod:`bench.quality.corpora`), compute
the exact truth (:mod:`bench.quality.exact`) and check it against a brute force on a sample, run
every runner one after another (each its own process, timed end to end, as ``make bench`` does),
then precision, recall and F1 at J >= 0.5 and J >= 0.8, each method cut by its own score, and at
containment >= 0.8 for the shingling runs. ``dedup`` (which brings ``defaults`` with it) runs
jobs/dedup.py on the defaults run's pairs, timed the same way, and audits its decision and the
component rule against the truth (:mod:`bench.quality.dedup`). Tables go to the terminal and to
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
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from bench.quality import dedup
from bench.quality.corpora import QUALITY_WORK, SPECS, Corpus, build
from bench.quality.exact import ExactTruth, check_sample, compute, overlaps
from bench.quality.metrics import LEVELS, evaluate, scored_codes
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

RUNNERS = ("defaults", "dedup", "estimate", "containment", "datasketch", "rensa", "mllib")
SHINGLING = ("defaults", "estimate", "containment")
LABELS = {
    "defaults": "shingling, defaults",
    "dedup": "jobs/dedup.py on the defaults run (keep longest)",
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
    the defaults packed in dist/shingling.zip, which is what spark-submit runs (shingling/default.toml
    when there is no zip)."""
    if zip_path.exists():
        with zipfile.ZipFile(zip_path) as packed:
            text = packed.read("shingling/default.toml").decode()
    else:
        text = (REPO / "shingling" / "default.toml").read_text()
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


def dedup_cmd(corpus: Corpus, run_dir: Path, target: Path, driver_memory: str | None) -> list[str]:
    """spark-submit of jobs/dedup.py on a pair run of ``corpus`` into ``target`` (replaced)."""
    return spark_submit(
        "jobs/dedup.py",
        [
            *("--input", str(corpus.path), "--run", str(run_dir)),
            *("--output", str(target), "--overwrite"),
        ],
        driver_memory,
        False,
    )


def text_lengths(corpus: Path, n: int) -> np.ndarray:
    """Characters of each document's text (what the keep policy ``longest`` ranks by), by id."""
    t = pq.read_table(corpus, columns=["doc_id", "text"])
    lengths = np.zeros(n, dtype=np.int64)
    lengths[t["doc_id"].to_numpy()] = pc.fill_null(pc.utf8_length(t["text"]), 0).to_numpy()
    return lengths


def audit_dedup(truth: ExactTruth, corpus: Path, run_dir: Path, target: Path) -> dict:
    """The dedup job's output (``target``) and the component rule on the same pairs, against the
    truth, at the job's cut (:mod:`bench.quality.dedup`)."""
    summary = json.loads((target / "summary.json").read_text())
    cut = float(summary["cut"])
    removed = ds.dataset(target / "removed", format="parquet").to_table(
        columns=["doc_id", "kept_id", "relation", "jaccard", "exact_duplicate"]
    )
    pairs = ds.dataset(run_dir / "pairs", format="parquet").to_table(
        columns=["doc_a", "doc_b", "jaccard", "exact_duplicate"]
    )
    a, b = pairs["doc_a"].to_numpy(), pairs["doc_b"].to_numpy()
    jac = pairs["jaccard"].to_numpy(zero_copy_only=False).astype(np.float64)
    exact = pairs["exact_duplicate"].to_numpy(zero_copy_only=False).astype(bool)
    t = dedup.Truth.of(truth.groups.rep, truth.pairs.a, truth.pairs.b, truth.pairs.jaccard)
    gone, kept = removed["doc_id"].to_numpy(), removed["kept_id"].to_numpy()
    decision = dedup.audit(t, gone, kept, cut)
    decision["stated_jaccard_max_error"] = dedup.stated_jaccard_error(
        t, gone, kept, removed["jaccard"].to_numpy(zero_copy_only=False)
    )
    decision["relations"] = {
        str(r["values"]): int(r["counts"]) for r in pc.value_counts(removed["relation"]).to_pylist()
    }
    decision["exact_duplicates"] = int(pc.sum(removed["exact_duplicate"]).as_py() or 0)
    comp_removed, comp_kept = dedup.component_rule(
        a, b, jac, exact, text_lengths(corpus, truth.n), cut
    )
    component = dedup.audit(t, comp_removed, comp_kept, cut)
    # truth pairs at the cut the pair job did not write (the only ones that can survive)
    codes, score = scored_codes(
        np.sort(np.stack([a, b], axis=1), axis=1).astype(np.int64), jac, truth.groups
    )
    truth_codes = truth.pairs.codes(truth.n)[truth.pairs.jaccard >= cut]
    return {
        "cut": cut,
        "pairs_at_cut": int((exact | (jac >= cut)).sum()),
        "truth_pairs_at_cut": int(len(truth_codes)),
        "truth_pairs_missed": int((~np.isin(truth_codes, codes[score >= cut])).sum()),
        "decision": decision,
        "component_rule": component,
        "job": {
            "decision": summary.get("decision"),
            "components": summary.get("components"),
            "stage_seconds": summary.get("stage_seconds"),
        },
    }


def run_dedup(
    corpus: Corpus, truth: ExactTruth, out: Path, args: argparse.Namespace
) -> tuple[Run, dict | None]:
    """jobs/dedup.py on the defaults run of ``out``, timed end to end; then its audit."""
    run_dir, target = out / "defaults", out / "dedup"
    log = out / "dedup.log"
    print(f"[quality] {corpus.name}: dedup ({LABELS['dedup']})", flush=True)
    cmd = dedup_cmd(corpus, run_dir, target, args.driver_memory)
    status, wall, peak = measure(cmd, log, args.timeout)
    run = Run("dedup", status, wall, peak, spark_cores(), target if status == "ok" else None)
    print(f"[quality] {corpus.name}: dedup {status} in {wall:.1f} s", flush=True)
    if status != "ok":
        run.detail = {
            "log": str(log.relative_to(REPO)),
            "tail": log.read_text(errors="replace")[-1500:],
        }
        return run, None
    audited = audit_dedup(truth, corpus.path, run_dir, target)
    for rule in ("decision", "component_rule"):
        f = audited[rule]
        print(
            f"[quality] {corpus.name}: {rule}: {f['removed']:,} removed, orphans "
            f"{f['orphans_kept_id']} (kept_id) / {f['orphans_none_left']} (none left), "
            f"{f['surviving_pairs']} surviving pairs",
            flush=True,
        )
    return run, audited


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
    deduped: dict | None = None
    out = QUALITY_WORK / "runs" / work.name
    out.mkdir(parents=True, exist_ok=True)
    for runner in args.only:
        if runner == "dedup":
            continue  # right after the defaults run, on its pairs
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
            if runner == "defaults" and "dedup" in args.only:
                runs.append(Run("dedup", "skipped", detail={"why": "the defaults run failed"}))
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
        if runner == "defaults" and "dedup" in args.only:
            dedup_run, deduped = run_dedup(corpus, truth, out, args)
            if deduped is not None:
                deduped["pair_job_wall"] = run.wall
                deduped["dedup_wall"] = dedup_run.wall
            runs.append(dedup_run)
    return {
        "corpus": corpus.meta,
        "truth": described,
        "runs": [asdict(r) for r in runs],
        "quality": results,
        "dedup": deduped,
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
    by_name = {r["name"]: r for r in data["runs"] if r["name"] != "dedup"}
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
    dedup_run = next((r for r in data["runs"] if r["name"] == "dedup"), None)
    if dedup_run is not None:
        lines += ["", dedup_markdown(dedup_run, data.get("dedup"))]
    lines += ["", f"End to end (corpus, truth, every runner): {data['seconds_end_to_end']:.0f} s."]
    return "\n".join(lines)


RULES = {
    "decision": "the decision (jobs/dedup.py: maximal independent set, longest first)",
    "component_rule": "the component rule (one longest per connected component, computed here)",
}


def dedup_markdown(run: dict, d: dict | None) -> str:
    """The dedup table of one corpus: the decision and the component rule against the truth."""
    if d is None:
        return f"Dedup: {run['status']}" + (
            f" after {run['wall']:.1f} s (log `{run['detail'].get('log')}`)."
            if run["wall"]
            else "."
        )
    cut = d["cut"]
    lines = [
        f"| dedup at τ = {cut:g} ({d['pairs_at_cut']:,} pairs of the defaults run at the cut) | "
        "removed | orphans: kept_id removed or at J < τ | orphans: no kept document at J ≥ τ | "
        "surviving pairs at J ≥ τ | surviving copies |",
        "|---|---|---|---|---|---|",
    ]
    for rule, label in RULES.items():
        f = d[rule]
        lines.append(
            f"| {label} | {f['removed']:,} | {f['orphans_kept_id']:,} | "
            f"{f['orphans_none_left']:,} | {f['surviving_pairs']:,} | {f['surviving_copies']:,} |"
        )
    job = d["job"]
    decision, components = job.get("decision") or {}, job.get("components") or {}
    stages = job.get("stage_seconds") or {}
    dec, comp = d["decision"], d["component_rule"]
    err = dec["stated_jaccard_max_error"]
    ratio = d["dedup_wall"] / d["pair_job_wall"] if d["pair_job_wall"] else None
    lines += [
        "",
        f"jobs/dedup.py: {d['dedup_wall']:.1f} s end to end, {_f(ratio)}× the defaults pair job's "
        f"{d['pair_job_wall']:.1f} s (stages: decide {stages.get('decide', 0):.1f} s, components "
        f"{stages.get('components', 0):.1f} s, corpus {stages.get('corpus', 0):.1f} s; "
        f"{decision.get('rounds')} rounds, {decision.get('finished_in_one_task'):,} links finished "
        f"in one task). Its summary: {decision.get('removed'):,} removed "
        f"({decision.get('removed_exact_duplicates'):,} exact copies), components.would_remove "
        f"{components.get('would_remove'):,} (the component rule here: {comp['removed']:,}). "
        f"removed/ jaccard against the truth: largest difference "
        f"{'–' if err is None else f'{err:.2g}'}. Truth pairs of distinct texts at J ≥ τ: "
        f"{d['truth_pairs_at_cut']:,}, of which the pair job did not write "
        f"{d['truth_pairs_missed']:,}.",
    ]
    for rule in RULES:
        f = d[rule]
        if f["orphans_kept_id"] or f["orphans_none_left"]:
            lines.append(
                f"{rule} orphan ids (first {dedup.ORPHAN_IDS}): kept_id "
                f"{f['orphan_ids_kept_id']}, none left {f['orphan_ids_none_left']}."
            )
    return "\n".join(lines)


def dedup_overview(data: dict[str, dict]) -> str:
    """One line per corpus: the decision and the component rule side by side."""
    lines = [
        "| corpus | documents | pairs at τ | decision: removed | orphans (kept_id / none left) "
        "| surviving pairs | component rule: removed | orphans (kept_id / none left) "
        "| surviving pairs | dedup s | pair job s |",
        "|" + "---|" * 11,
    ]
    for name, c in data.items():
        d = c.get("dedup")
        if d is None:
            continue
        dec, comp = d["decision"], d["component_rule"]
        lines.append(
            f"| {name} | {c['corpus']['documents']:,} | {d['pairs_at_cut']:,} | "
            f"{dec['removed']:,} | {dec['orphans_kept_id']} / {dec['orphans_none_left']} | "
            f"{dec['surviving_pairs']} | {comp['removed']:,} | "
            f"{comp['orphans_kept_id']:,} / {comp['orphans_none_left']:,} | "
            f"{comp['surviving_pairs']} | {d['dedup_wall']:.1f} | {d['pair_job_wall']:.1f} |"
        )
    return "\n".join(lines) if len(lines) > 2 else ""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.quality", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpora", default=",".join(SPECS), help=f"comma-separated (default: {','.join(SPECS)})"
    )
    parser.add_argument(
        "--only",
        default=",".join(RUNNERS),
        help=f"comma-separated runners (default: {','.join(RUNNERS)}); dedup runs jobs/dedup.py"
        " on the defaults run and brings defaults with it: --only dedup takes minutes",
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
    if "dedup" in args.only and "defaults" not in args.only:
        args.only.insert(0, "defaults")  # dedup reads the defaults run's pairs
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
        *(
            [
                "**Dedup against the exact truth** (orphans: removed documents left without a "
                "kept near-duplicate; docs/quality.md):\n\n" + overview
            ]
            if (overview := dedup_overview(data))
            else []
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
