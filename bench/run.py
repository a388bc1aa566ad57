"""``make bench``: one corpus, every runner one after another, exact truth, one table.

    python -m bench.run --docs 100000 [--no-skew] [--only scan,pipeline] [--seed 42] [--timeout S]
    python -m bench.run --docs 100000 --skew-compare     the pipeline with and without skew

Each runner is its own process (spark-submit, or python for datasketch and rensa), timed end to end
with JVM start-up included, its whole process tree's resident memory sampled every 0.2 s. The table
goes to the terminal and to ``bench/results/<docs>-<time>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pyarrow.parquet as pq

from bench.corpus import WORK, Corpus, CorpusSpec, build
from bench.truth import BINS, Quality, Truth, evaluate, read_pairs

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
BIN = REPO / ".venv" / "bin"
PROPERTIES = REPO / "conf" / "spark-local.conf"
ZIP = REPO / "dist" / "shingling.zip"
SAMPLE = REPO / "data" / "sample" / "corpus.parquet"
RUNNERS = ("scan", "pipeline", "estimate", "dedup", "api", "mllib", "datasketch", "rensa")
LABELS = {
    "scan": "scan floor (Spark: read, sum lengths)",
    "pipeline": "shingling (defaults: every pair verified, exact Jaccard)",
    "estimate": "shingling estimate-only (pairs.verify=false)",
    "api": "shingling.spark.near_duplicates (lazy plan, written)",
    "dedup": "shingling dedup of the pipeline run (jobs/dedup.py)",
    "mllib": "Spark MLlib MinHashLSH (5 tables)",
    "datasketch": "datasketch MinHashLSH (128 perm, 1 process)",
    "rensa": "rensa RMinHashLSH (128 perm, 32 bands × 4, exact copies set aside, 1 process)",
}
#: The peers whose time the defaults are set against (issue 37, point 5), in the table's order.
PEERS = ("rensa", "datasketch", "mllib")
# The peers get the pipeline's shuffle settings (shingling/default.toml [spark]), so that no one pays
# for Spark's default of 200 shuffle partitions on two cores.
PEER_CONF = {
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "2000",
}


@dataclass
class Run:
    """One runner's process: how it ended, how long it took, the most memory it held."""

    name: str
    status: str  # ok, failed, timeout, skipped
    wall: float | None = None
    peak_rss: int | None = None
    cores: int = 1
    pairs: Path | None = None
    detail: dict = field(default_factory=dict)


def spark_cores() -> int:
    """Cores Spark uses on this machine: N of local[N] in conf/spark-local.conf."""
    found = re.search(r"^spark\.master\s+local\[(\d+)\]", PROPERTIES.read_text(), re.M)
    return int(found.group(1)) if found else os.cpu_count() or 1


def tree_rss(proc: psutil.Process) -> int:
    """Resident memory of a process and all its descendants (the JVM, the Python workers)."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure(cmd: list[str], log: Path, timeout: float) -> tuple[str, float, int]:
    """Run a command in its own process group; (status, wall seconds, peak tree RSS bytes)."""
    env = dict(os.environ)
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        PYSPARK_PYTHON=str(BIN / "python"),
        PYSPARK_DRIVER_PYTHON=str(BIN / "python"),
        PYTHONPATH=str(REPO),  # the peers import bench.peers on the driver and the workers
    )
    started = time.monotonic()
    with log.open("w") as out:
        child = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        proc, peak, status = psutil.Process(child.pid), 0, "ok"
        while child.poll() is None:
            try:
                peak = max(peak, tree_rss(proc))
            except psutil.Error:
                pass
            if time.monotonic() - started > timeout:
                os.killpg(child.pid, signal.SIGKILL)  # the group this call started, nothing else
                child.wait()
                status = "timeout"
                break
            time.sleep(0.2)
    wall = time.monotonic() - started
    if status == "ok" and child.returncode != 0:
        status = "failed"
    return status, wall, peak


def spark_submit(script: str, args: list[str], driver_memory: str | None, peer: bool) -> list[str]:
    cmd = [str(BIN / "spark-submit"), "--properties-file", str(PROPERTIES), "--py-files", str(ZIP)]
    if driver_memory:
        cmd += ["--driver-memory", driver_memory]
    for key, value in PEER_CONF.items() if peer else ():
        cmd += ["--conf", f"{key}={value}"]
    return [*cmd, script, *args]


def pipeline_cmd(
    corpus: Path, output: Path, settings: list[str], driver_memory: str | None
) -> list[str]:
    """spark-submit of jobs/near_duplicates.py over ``corpus`` into ``output`` (replaced), with
    ``settings`` (section.key=value) over the defaults."""
    return spark_submit(
        "jobs/near_duplicates.py",
        [
            *("--input", str(corpus), "--output", str(output), "--overwrite"),
            *(f"--set={setting}" for setting in settings),
        ],
        driver_memory,
        False,
    )


def last_json(log: Path) -> dict:
    """The last line of a log that is a JSON object (what a peer prints when done)."""
    for line in reversed(log.read_text(errors="replace").splitlines()):
        if line.startswith("{") and line.endswith("}"):
            try:
                return dict(json.loads(line))
            except json.JSONDecodeError:
                continue
    return {}


def run_one(name: str, corpus: Corpus, out: Path, args: argparse.Namespace) -> Run:
    """Run one runner on the corpus; its pairs (if any) land under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"{name}.log"
    cores = spark_cores()
    if name == "scan":
        cmd = spark_submit(
            "bench/peers/scan.py", ["--input", str(corpus.path)], args.driver_memory, True
        )
        pairs = None
    elif name in ("pipeline", "estimate"):
        target = out / name
        settings = [*args.set, *(["pairs.verify=false"] if name == "estimate" else [])]
        cmd = pipeline_cmd(corpus.path, target, settings, args.driver_memory)
        pairs = target / "pairs"
    elif name == "dedup":
        run_dir = out / "pipeline"
        if not (run_dir / "summary.json").exists():
            return Run(name, "skipped", detail={"why": "no pipeline run: put pipeline before it"})
        cmd = spark_submit(
            "jobs/dedup.py",
            [
                *("--input", str(corpus.path), "--run", str(run_dir)),
                *("--output", str(out / "dedup"), "--overwrite"),
            ],
            args.driver_memory,
            False,
        )
        pairs = None
    elif name in ("api", "mllib"):
        script, pairs, peer = {
            "api": ("bench/peers/api_plan.py", out / "api-pairs", True),
            "mllib": ("bench/peers/mllib_minhash.py", out / "mllib-pairs", True),
        }[name]
        cmd = spark_submit(
            script, ["--input", str(corpus.path), "--output", str(pairs)], args.driver_memory, peer
        )
    elif name in ("datasketch", "rensa"):
        if name == "datasketch" and corpus.meta["documents"] > args.datasketch_max_docs:
            return Run(
                name, "skipped", detail={"why": f"more than {args.datasketch_max_docs} documents"}
            )
        pairs = out / f"{name}-pairs.parquet"
        module = {"datasketch": "bench.peers.datasketch_lsh", "rensa": "bench.peers.rensa_lsh"}
        cmd = [
            str(BIN / "python"),
            "-m",
            module[name],
            "--input",
            str(corpus.path),
            "--output",
            str(pairs),
            *(["--copies-once"] if name == "rensa" else []),
        ]
        cores = 1
    else:
        raise ValueError(f"unknown runner {name!r}")
    print(f"[bench] {name}: running ({LABELS[name]})", flush=True)
    status, wall, peak = measure(cmd, log, args.timeout)
    run = Run(name, status, wall, peak, cores, pairs if status == "ok" else None)
    if name in ("pipeline", "estimate") and status == "ok":
        summary = json.loads((out / name / "summary.json").read_text())
        run.detail = {key: summary.get(key) for key in ("stage_seconds", "pairs", "documents")}
    elif name == "dedup" and status == "ok":
        summary = json.loads((out / name / "summary.json").read_text())
        run.detail = {
            key: summary.get(key) for key in ("stage_seconds", "decision", "components", "corpus")
        }
    elif status == "ok":
        run.detail = last_json(log)
    else:
        run.detail = {
            "log": str(log.relative_to(REPO)),
            "tail": log.read_text(errors="replace")[-1500:],
        }
    print(f"[bench] {name}: {status} in {wall:.1f} s, peak {peak / 2**30:.2f} GiB", flush=True)
    return run


# --- the report ---------------------------------------------------------------------------------


def machine() -> dict:
    """What the numbers were measured on, including how busy it was."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        model = found.group(1) if found else ""
    import datasketch
    import pyspark

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    return {
        "commit": commit,
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "system": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "datasketch": datasketch.__version__,
        "rensa": _version("rensa"),
        "spark_cores": spark_cores(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table(runs: list[Run], quality: dict[str, Quality], text_mb: float) -> str:
    """The one table: speed, memory and quality of every runner."""
    floor = next((r.wall for r in runs if r.name == "scan" and r.status == "ok"), None)
    mllib = next((r for r in runs if r.name == "mllib"), None)
    head = (
        "| runner | status | wall s | × scan floor | × MinHashLSH | peak RSS GiB | MB/core·s "
        "| pairs (distinct texts) | precision J≥0.5 | recall J≥0.8 | recall J≥0.5 | copies linked |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in runs:
        q = quality.get(r.name)
        if r.wall is None:
            lines.append(f"| {LABELS[r.name]} | {r.status} |" + " – |" * 10)
            continue
        vs_floor = _f(r.wall / floor, 1) if floor else "–"
        if floor and r.status == "timeout":  # a runner killed at the timeout: a lower bound
            vs_floor = f"> {vs_floor}"
        if mllib is None or mllib.wall is None:
            vs_mllib = "–"
        elif mllib.status == "ok":
            vs_mllib = _f(r.wall / mllib.wall, 2)
        elif mllib.status == "timeout" and r.name != "mllib":  # its time is at least the timeout
            vs_mllib = f"< {r.wall / mllib.wall:.2f}"
        else:
            vs_mllib = "–"
        wall = {"ok": f"{r.wall:.1f}", "timeout": f"> {r.wall:.0f}"}.get(r.status, f"{r.wall:.1f}")
        rate = _f(text_mb / (r.wall * r.cores)) if r.status == "ok" else "–"
        lines.append(
            f"| {LABELS[r.name]} | {r.status} | {wall} | {vs_floor} | {vs_mllib} | "
            f"{_f(r.peak_rss / 2**30 if r.peak_rss else None)} | {rate} | "
            f"{q.reported if q else '–'} | {_f(q.precision_50 if q else None, 3)} | "
            f"{_f(q.recall_80 if q else None, 3)} | {_f(q.recall_50 if q else None, 3)} | "
            f"{_f(q.copies_linked if q else None, 3)} |"
        )
    return "\n".join(lines)


def acceptance_table(quality: dict[str, Quality], described: dict) -> str:
    """Probability of reporting a pair against its exact Jaccard, per runner."""
    names = list(quality)
    lines = [
        "| exact Jaccard | pairs | " + " | ".join(LABELS[n].split(" (")[0] for n in names) + " |",
        "|" + "---|" * (2 + len(names)),
    ]
    for i, count in enumerate(described["bin_counts"]):
        lo, hi = BINS[i], BINS[i + 1]
        label = f"[{lo:.1f}, {hi:.1f}{']' if i == len(BINS) - 2 else ')'}"
        cells = " | ".join(_f(quality[n].acceptance[i], 3) for n in names)
        lines.append(f"| {label} | {count} | {cells} |")
    return "\n".join(lines)


def work_note(detail: dict[str, Any]) -> str:
    """The join's work per sketched document, from a run's summary (docs/output.md): the pairs
    its postings tested, those the signatures passed, the candidates scored and verified."""
    pairs, documents = detail.get("pairs") or {}, detail.get("documents") or {}
    sketched = documents.get("sketched")
    if not sketched or "pairs_tested" not in pairs:
        return ""
    verified = (pairs.get("verification") or {}).get("candidates_verified", 0)
    per = {
        "pairs tested": pairs["pairs_tested"],
        "signature passes": pairs["signature_passes"],
        "candidates scored": pairs.get("candidate_pairs", 0),
        "verified": verified,
    }
    counts = ", ".join(f"{name} {value / sketched:.2f}" for name, value in per.items())
    return f" The join's work per sketched document: {counts}."


def pipeline_note(runs: list[Run]) -> str:
    """The pipeline's own stage times, against the scan floor."""
    p = next((r for r in runs if r.name == "pipeline" and r.status == "ok"), None)
    floor = next((r.wall for r in runs if r.name == "scan" and r.status == "ok"), None)
    if p is None or p.wall is None or not p.detail.get("stage_seconds"):
        return ""
    s = p.detail["stage_seconds"]
    startup = p.wall - s["total"]
    text = (
        f"Pipeline stages (summary.json): sketch {s['sketch']:.1f} s, pairs {s['pairs']:.1f} s, "
        f"in-job total {s['total']:.1f} s; process start-up and shutdown {startup:.1f} s."
    )
    if floor:
        text += (
            f" Start-up plus sketching: {(startup + s['sketch']) / floor:.2f}× the scan floor's "
            f"{floor:.1f} s; the whole run {p.wall / floor:.2f}× the scan floor."
        )
    text += work_note(p.detail)
    estimate = next((r.wall for r in runs if r.name == "estimate" and r.status == "ok"), None)
    if estimate:
        text += f" Verifying every pair costs {p.wall / estimate:.2f}× the estimate-only run."
    dedup = next((r for r in runs if r.name == "dedup" and r.status == "ok"), None)
    if dedup is not None and dedup.wall is not None:
        d = dedup.detail.get("decision") or {}
        c = dedup.detail.get("components") or {}
        text += (
            f" Dedup {dedup.wall:.1f} s whole process, {dedup.wall / p.wall:.2f}× the pipeline run"
            f" ({d.get('rounds')} rounds, {d.get('finished_in_one_task')} links finished in one"
            f" task; {d.get('removed')} documents removed, the component rule would remove"
            f" {c.get('would_remove')})."
        )
    return text


def peers_note(runs: list[Run]) -> str:
    """The defaults' whole-process time against each peer's, on the same corpus in one invocation:
    above 1 the defaults are slower; against a peer that timed out, a bound."""
    p = next((r for r in runs if r.name == "pipeline" and r.status == "ok" and r.wall), None)
    if p is None or p.wall is None:
        return ""
    parts = []
    for name in PEERS:
        peer = next((r for r in runs if r.name == name and r.wall), None)
        if peer is None or peer.wall is None or peer.status not in ("ok", "timeout"):
            continue
        ratio = p.wall / peer.wall
        parts.append(f"{'< ' if peer.status == 'timeout' else ''}{ratio:.2f}× {name}'s")
    if not parts:
        return ""
    return f"The defaults' whole process against the peers': {', '.join(parts)}."


def evaluate_runs(
    corpus: Corpus, runs: list[Run], args: argparse.Namespace
) -> tuple[dict[str, Quality], dict]:
    """Exact truth for the planted pairs, every reported pair and a random sample."""
    started = time.monotonic()
    print("[bench] truth: exact Jaccard of planted, reported and sampled pairs", flush=True)
    truth = Truth(corpus.path, corpus.path.parent / "truth.parquet")
    planted_t = pq.read_table(corpus.planted, columns=["doc_a", "doc_b"])
    planted = np.stack([planted_t["doc_a"].to_numpy(), planted_t["doc_b"].to_numpy()], axis=1)
    pairs = {r.name: read_pairs([r.pairs]) for r in runs if r.pairs is not None}
    quality, described = evaluate(truth, pairs, planted, sample=args.sample, seed=args.seed)
    described["truth_seconds"] = round(time.monotonic() - started, 1)
    print(
        f"[bench] truth: {described['pairs_evaluated']} pairs in {described['truth_seconds']} s",
        flush=True,
    )
    return quality, described


def machine_line(before: dict, after: dict) -> str:
    """The machine and its load before and after the runs."""
    return (
        f"Machine: {after['cpu']}, {after['cores']} cores, {after['memory_gib']} GiB, "
        f"Spark local[{after['spark_cores']}], pyspark {after['pyspark']}, commit {after['commit']}, "
        f"datasketch {after['datasketch']}, rensa {after.get('rensa')}; load average {before['load_average']} before, "
        f"{after['load_average']} after (on a shared machine the times are noisy)."
    )


def describe_corpus(corpus: Corpus) -> str:
    m = corpus.meta
    return (
        f"Corpus: {m['documents']:,} documents, {m['text_bytes'] / 1e6:.1f} MB of text "
        f"(mean {m['mean_doc_bytes']:.0f} bytes), seed {m['spec']['seed']}, "
        f"{'skewed' if m['spec']['skew'] else 'clean'}"
        f"{', the pair-denser recipe' if m['spec'].get('dense') else ''}"
        f"{', the hostile recipe' if m['spec'].get('hostile') else ''}: {m['families']:,} "
        f"families of {m['family_documents'] // max(m['families'], 1)} "
        f"({m['planted_pairs']:,} planted pairs), {m['hot_page_copies']:,} copies of one page, "
        f"{m['boilerplate_documents']:,} documents sharing a boilerplate paragraph "
        f"({m['boilerplate_pairs']:,} of their pairs evaluated); "
        f"{m['pool_sentences']:,} distinct base sentences (pool {m['pool_digest']})."
    )


def write_results(name: str, markdown: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = RESULTS / f"{name}-{stamp}.md"
    path.write_text(markdown + "\n")
    path.with_suffix(".json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    return path


def warm_up(args: argparse.Namespace) -> None:
    """One untimed run of the pipeline on the bundled sample corpus, so that numba's on-disk cache
    holds the compiled loops before anything is timed. On a fresh machine the first run compiles
    them (about 10 s of its sketch stage, measured): a one-time cost, not the pipeline's."""
    print("[bench] warm-up: the pipeline on the bundled sample (compiles numba's loops once)")
    out = WORK / "warm-up"
    cmd = pipeline_cmd(SAMPLE, out, [], args.driver_memory)
    out.parent.mkdir(parents=True, exist_ok=True)
    status, wall, _ = measure(cmd, out.with_suffix(".log"), args.timeout)
    print(f"[bench] warm-up: {status} in {wall:.1f} s", flush=True)


def bench(args: argparse.Namespace) -> int:
    """Every selected runner on one corpus, then the table."""
    before = machine()
    corpus = build(
        CorpusSpec(
            docs=args.docs, seed=args.seed, skew=args.skew, dense=args.dense, hostile=args.hostile
        )
    )
    out = WORK / "runs" / corpus.path.parent.name
    if {"pipeline", "estimate"} & set(args.only):
        warm_up(args)
    runs = [run_one(name, corpus, out, args) for name in args.only]
    if args.no_truth:
        quality, described = {}, {}
    else:
        quality, described = evaluate_runs(corpus, runs, args)
    text_mb = corpus.text_bytes / 1e6
    m = machine()
    settings = f"Pipeline settings: defaults, with {', '.join(args.set)}." if args.set else ""
    markdown = "\n\n".join(
        part
        for part in (
            f"## {args.docs:,} documents, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            describe_corpus(corpus),
            settings,
            table(runs, quality, text_mb),
            pipeline_note(runs),
            peers_note(runs),
            ""
            if args.no_truth
            else f"Acceptance curve: share of the planted and randomly sampled pairs (of distinct "
            f"texts) reported, by exact Jaccard. {described['pairs_evaluated']:,} pairs evaluated "
            f"in all; of {described['sampled_pairs']:,} random pairs, "
            f"{described['sampled_at_or_above_0.5']} at J ≥ 0.5.",
            "Times only (--no-truth): quality not evaluated."
            if args.no_truth
            else acceptance_table(quality, described),
            machine_line(before, m),
        )
        if part
    )
    print("\n" + markdown)
    path = write_results(
        str(args.docs),
        markdown,
        {
            "corpus": corpus.meta,
            "runs": [asdict(r) for r in runs],
            "quality": {k: asdict(v) for k, v in quality.items()},
            "evaluated": described,
            "machine_before": before,
            "machine_after": m,
            "argv": sys.argv[1:],
        },
    )
    print(f"\n[bench] written {path.relative_to(REPO)} and .json")
    return 0 if all(r.status in ("ok", "skipped") for r in runs) else 1


def skew_compare(args: argparse.Namespace) -> int:
    """The pipeline on the same corpus with and without skew: the cost ratio and the quality."""
    before, rows, data = machine(), [], {}
    warm_up(args)
    for skew in (False, True):
        corpus = build(CorpusSpec(docs=args.docs, seed=args.seed, skew=skew))
        out = WORK / "runs" / corpus.path.parent.name
        run = run_one("pipeline", corpus, out, args)
        quality, described = evaluate_runs(corpus, [run], args)
        q = quality.get("pipeline")
        data["skewed" if skew else "clean"] = {
            "corpus": corpus.meta,
            "run": asdict(run),
            "quality": asdict(q) if q else None,
            "evaluated": described,
        }
        stages = run.detail.get("stage_seconds") or {}
        rows.append((skew, corpus, run, q, stages))
    lines = [
        "| corpus | wall s | sketch s | pairs s | pairs written | precision J≥0.5 "
        "| recall J≥0.8 | recall J≥0.5 | copies linked |",
        "|" + "---|" * 9,
    ]
    for skew, corpus, run, q, stages in rows:
        m = corpus.meta
        name = "clean"
        if skew:
            name = (
                f"skewed ({m['hot_page_copies']:,} copies of one page, "
                f"{m['boilerplate_documents']:,} with boilerplate)"
            )
        written = (run.detail.get("pairs") or {}).get("written", "–")
        lines.append(
            f"| {name} | {_f(run.wall, 1)} | {_f(stages.get('sketch'), 1)} "
            f"| {_f(stages.get('pairs'), 1)} | {written} "
            f"| {_f(q.precision_50 if q else None, 3)} | {_f(q.recall_80 if q else None, 3)} "
            f"| {_f(q.recall_50 if q else None, 3)} | {_f(q.copies_linked if q else None, 3)} |"
        )
    clean, skewed = rows[0][2], rows[1][2]
    ratio = (
        skewed.wall / clean.wall
        if clean.wall and skewed.wall and clean.status == skewed.status == "ok"
        else None
    )
    pair_ratio = None
    if rows[0][4].get("pairs") and rows[1][4].get("pairs"):
        pair_ratio = rows[1][4]["pairs"] / rows[0][4]["pairs"]
    m = machine()
    markdown = "\n\n".join(
        [
            f"## Skew: {args.docs:,} documents with and without skew, "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            "\n".join(lines),
            f"Cost ratio skewed / clean: wall {_f(ratio)}, pair stage {_f(pair_ratio)} "
            "(target: at most 1.5).",
            machine_line(before, m),
        ]
    )
    print("\n" + markdown)
    data.update(ratio=ratio, pair_stage_ratio=pair_ratio, machine=m, argv=sys.argv[1:])
    path = write_results(f"skew-{args.docs}", markdown, data)
    print(f"\n[bench] written {path.relative_to(REPO)} and .json")
    return 0 if ratio is not None else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000, help="corpus size (default 10000)")
    parser.add_argument("--seed", type=int, default=42, help="corpus seed (default 42)")
    parser.add_argument(
        "--skew",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one page copied into 5%% of the documents, a boilerplate paragraph into 10%% "
        "(default: on)",
    )
    parser.add_argument(
        "--dense",
        action="store_true",
        help="the pair-denser recipe: a fifth of the documents in pairs spread over J 0.3 to 1.0, "
        "boilerplate in 3%% (bench/corpus.py)",
    )
    parser.add_argument(
        "--hostile",
        action="store_true",
        help="the recipe built to hurt: reused paragraphs, boilerplate blocks around "
        "pairs.max_posting, a template in 10%%, 1%% in families of thousands (bench/corpus.py)",
    )
    parser.add_argument(
        "--only",
        default=",".join(RUNNERS),
        help=f"comma-separated runners (default: {','.join(RUNNERS)})",
    )
    parser.add_argument(
        "--timeout", type=float, default=1800, help="seconds per runner before it is killed"
    )
    parser.add_argument(
        "--sample", type=int, default=20_000, help="random pairs added to the evaluated set"
    )
    parser.add_argument(
        "--datasketch-max-docs",
        type=int,
        default=200_000,
        help="skip datasketch above this many documents",
    )
    parser.add_argument(
        "--driver-memory", help="spark-submit --driver-memory for every Spark runner"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a pipeline setting other than its default (e.g. sketch.k=32), to explore the curve",
    )
    parser.add_argument(
        "--skew-compare", action="store_true", help="the pipeline with and without skew"
    )
    parser.add_argument(
        "--no-truth",
        action="store_true",
        help="times only: skip the exact truth of the reported pairs (at 10M it takes longer"
        " than the runs)",
    )
    args = parser.parse_args(argv)
    args.only = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(args.only) - set(RUNNERS))
    if unknown:
        parser.error(f"unknown runner(s) {', '.join(unknown)}; choose from {', '.join(RUNNERS)}")
    return args


def zip_is_current() -> bool:
    """Whether dist/shingling.zip exists and is newer than every source file; if not, says so."""
    sources = [*REPO.glob("shingling/**/*.py"), *REPO.glob("jobs/**/*.py")]
    if not ZIP.exists() or ZIP.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        # spark-submit ships the zip to the workers: a stale one runs other code than jobs/
        print(
            f"error: {ZIP.relative_to(REPO)} is missing or older than the sources: "
            "run `make dist` (make bench does)",
            file=sys.stderr,
        )
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not zip_is_current():
        return 2
    return skew_compare(args) if args.skew_compare else bench(args)


if __name__ == "__main__":
    sys.exit(main())
