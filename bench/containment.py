"""Containment mode on planted excerpts: recall, precision, sketch storage and run time.

    python -m bench.containment [--long 160] [--excerpts 300] [--mods 16,32,64] [--seed 7]

Corpus (deterministic from the seed), written under ``bench/work/containment-*``:

- **long documents**: about 20,000 words each of real sentences (bench.corpus's pool of sentences
  from the machine's docs, docstrings and licences), drawn without replacement, so two long
  documents share only the language's common phrases;
- **planted excerpts**: a 1,000-word passage of a long document, with light edits (0 to 3% of its
  words substituted, inserted or deleted), placed one of three ways: standing alone as a short
  document; wrapped in 100 to 2,000 words of fresh sentences (so its containment in the source
  spans about 0.3 to 1.0); or lifted into another long document (a host), and standing alone too.

The job runs by spark-submit in default mode and in containment mode for each m; each pair table
is compared with the exact containment |A ∩ B| / |A| of every pair of documents (all distinct
shingles, an inverted index). Printed and written to ``bench/results/containment-<time>.md``:
recall of the pairs with exact containment >= 0.8, the share of reported excerpt pairs whose
exact containment is below 0.5, sketch rows against document length, and wall times.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench.corpus import WORK, load_pool
from bench.run import RESULTS, measure, spark_submit
from shingling.estimators import containment, jaccard
from shingling.normalize import words
from shingling.sketch import Sketch, shingle_hashes

PASSAGE_WORDS = 1_000
LONG_WORDS = 20_000
WRAP_WORDS = (100, 250, 500, 1_000, 2_000)
THRESHOLDS = (0.5, 0.6, 0.7, 0.8)


# --- corpus ------------------------------------------------------------------------------------


def light_edits(
    tokens: list[str], rate: float, vocabulary: list[str], rng: random.Random
) -> list[str]:
    """Substitute, insert or delete a word at about ``rate`` of the positions."""
    out = list(tokens)
    for _ in range(round(rate * len(out))):
        at, op = rng.randrange(len(out)), rng.choice("sid")
        if op == "s":
            out[at] = rng.choice(vocabulary)
        elif op == "i":
            out.insert(at, rng.choice(vocabulary))
        else:
            del out[at]
    return out


def build_corpus(n_long: int, n_excerpts: int, seed: int) -> tuple[pa.Table, list[dict]]:
    """(doc_id, text) of the corpus, and one record per planted excerpt (source, where it went)."""
    rng = random.Random(seed)
    pool = load_pool()
    order = list(range(len(pool)))
    rng.shuffle(order)
    sentences = iter(order)
    longs: list[list[str]] = []  # each long document as whitespace tokens
    for _ in range(n_long):
        doc: list[str] = []
        while len(doc) < LONG_WORDS:
            doc += pool[next(sentences)].split()
        longs.append(doc)
    fresh = [pool[i] for i in sentences]  # sentences no long document holds: filler
    vocabulary = [w for s in rng.sample(fresh, 2_000) for w in s.split()]

    def filler(n_words: int) -> list[str]:
        out: list[str] = []
        while len(out) < n_words:
            out += fresh.pop().split()
        return out

    texts = [" ".join(d) for d in longs]
    hosts = [list(d) for d in longs]
    planted = []
    for i in range(n_excerpts):
        source = rng.randrange(n_long)
        start = rng.randrange(len(longs[source]) - PASSAGE_WORDS)
        passage = light_edits(
            longs[source][start : start + PASSAGE_WORDS], rng.uniform(0, 0.03), vocabulary, rng
        )
        kind = ("alone", "wrapped", "lifted")[i % 3]
        record = {"source": source, "kind": kind, "excerpt": len(texts), "host": None, "wrap": 0}
        if kind == "wrapped":
            record["wrap"] = rng.choice(WRAP_WORDS)
            extra = filler(record["wrap"])
            cut = rng.randrange(len(extra) + 1)
            passage = extra[:cut] + passage + extra[cut:]
        elif kind == "lifted":
            host = rng.choice([h for h in range(n_long) if h != source])
            at = rng.randrange(len(hosts[host]))
            hosts[host][at:at] = passage
            record["host"] = host
        texts.append(" ".join(passage))
        planted.append(record)
    for h, doc in enumerate(hosts):
        texts[h] = " ".join(doc)
    ids = rng.sample(range(100_000, 999_999), len(texts))  # shuffled ids: doc_a is either side
    for record in planted:
        record["source"] = ids[record["source"]]
        record["excerpt"] = ids[record["excerpt"]]
        record["host"] = None if record["host"] is None else ids[record["host"]]
    table = pa.table({"doc_id": pa.array(ids, pa.int64()), "text": texts})
    return table, planted


# --- exact truth -------------------------------------------------------------------------------


@dataclass
class Truth:
    """Every document's distinct shingle hashes (sorted), for exact containments."""

    shingles: dict[int, np.ndarray]

    def containment(self, a: int, b: int) -> float:
        """Exact |A ∩ B| / |A|."""
        sa, sb = self.shingles[a], self.shingles[b]
        return len(np.intersect1d(sa, sb, assume_unique=True)) / len(sa)

    def contained_pairs(self, at_least: float, short: int = 6_000) -> dict[tuple[int, int], float]:
        """(contained, container) -> exact containment, for every pair reaching ``at_least``.

        Only a document of at most ``short`` shingles is checked as the contained one: the long
        documents are disjoint draws of sentences, so none lies in another beyond common phrases
        (a host holds a 1,000-word passage of its 20,000 words).
        """
        small = [d for d, s in self.shingles.items() if len(s) <= short]
        h = np.concatenate([self.shingles[d] for d in small])
        owner = np.concatenate([np.full(len(self.shingles[d]), d) for d in small])
        order = np.argsort(h, kind="stable")
        h, owner = h[order], owner[order]
        out = {}
        for x, xh in self.shingles.items():
            lo, hi = np.searchsorted(h, xh, "left"), np.searchsorted(h, xh, "right")
            n = hi - lo
            if not n.any():
                continue
            starts = np.repeat(lo[n > 0], n[n > 0])
            offsets = np.arange(n.sum()) - np.repeat(np.cumsum(n[n > 0]) - n[n > 0], n[n > 0])
            docs, counts = np.unique(owner[starts + offsets], return_counts=True)
            for s, c in zip(docs.tolist(), counts.tolist(), strict=True):
                share = c / len(self.shingles[s])
                if s != x and share >= at_least:
                    out[(s, x)] = share
        return out


def exact_truth(corpus: pa.Table, width: int) -> Truth:
    """Every document's distinct shingle hashes, from the library's definition of a shingle."""
    ids = corpus.column("doc_id").to_pylist()
    texts = corpus.column("text").to_pylist()
    return Truth(
        {
            d: np.unique(np.array(shingle_hashes(words(t), width), dtype=np.int64))
            for d, t in zip(ids, texts, strict=True)
        }
    )


# --- runs --------------------------------------------------------------------------------------


@dataclass
class JobRun:
    name: str
    sample_mod: int
    wall: float
    summary: dict
    pairs: pa.Table
    documents: pa.Table


def run_job(
    name: str, corpus_path: Path, out: Path, sets: list[str], timeout: float, reuse: bool
) -> JobRun:
    """One spark-submit of jobs/near_duplicates.py; its pair and documents tables."""
    args = ["--input", str(corpus_path), "--output", str(out / name), "--overwrite"]
    for s in sets:
        args += ["--set", s]
    cmd = spark_submit("jobs/near_duplicates.py", args, driver_memory="3g", peer=False)
    log, timing = out / f"{name}.log", out / f"{name}.wall.json"
    if reuse and timing.exists():  # evaluate an earlier run again, without running it
        wall = json.loads(timing.read_text())["wall"]
    else:
        status, wall, _ = measure(cmd, log, timeout)
        if status != "ok":
            raise SystemExit(f"{name}: {status}, see {log}")
        timing.write_text(json.dumps({"wall": wall}))
    summary = json.loads((out / name / "summary.json").read_text())
    pairs = pq.read_table(out / name / "pairs")
    documents = pq.read_table(
        out / name / "documents", columns=["doc_id", "n_words", "n_shingles", "sketch"]
    )
    m = summary["config"]["sketch"]["sample_mod"]
    return JobRun(name, m, wall, summary, pairs, documents)


@dataclass
class Quality:
    recall: float  # of pairs with exact containment >= 0.8
    found: int
    wanted: int
    reported: int  # excerpt pairs (a_in_b / b_in_a) at or above the cut
    below_half: int  # of them, exact containment in the labelled direction < 0.5
    planted_recall: float  # of planted excerpt-source pairs with exact containment >= 0.8
    estimator_recall: float  # of pairs >= 0.8 whose sketches' estimates reach the cuts


def quality(run: JobRun, truth: Truth, wanted: dict, planted: list[dict], cut: float) -> Quality:
    """Recall at exact containment >= 0.8 and the false share of excerpt pairs estimated >= cut."""
    rows = run.pairs.select(
        ["doc_a", "doc_b", "containment_a", "containment_b", "relation"]
    ).to_pylist()
    claimed: set[tuple[int, int]] = set()  # (contained, container) the table says
    reported = below = 0
    for r in rows:
        a, b, ca, cb, rel = (
            r["doc_a"],
            r["doc_b"],
            r["containment_a"],
            r["containment_b"],
            r["relation"],
        )
        if rel == "near_duplicate":
            claimed |= {(a, b), (b, a)}
        elif rel == "a_in_b" and ca >= cut or rel == "b_in_a" and cb >= cut:
            x, y = (a, b) if rel == "a_in_b" else (b, a)
            claimed.add((x, y))
            reported += 1
            below += truth.containment(x, y) < 0.5
    found = sum(1 for p in wanted if p in claimed)
    planted_wanted = [
        (r["excerpt"], y)
        for r in planted
        for y in (r["source"], r["host"])
        if y is not None and (r["excerpt"], y) in wanted
    ]
    planted_found = sum(1 for p in planted_wanted if p in claimed)
    sketches = {
        d: Sketch(tuple(h), n_shingles=n, width=4, k=20, sample_mod=run.sample_mod)
        for d, n, h in zip(
            run.documents.column("doc_id").to_pylist(),
            run.documents.column("n_shingles").to_pylist(),
            run.documents.column("sketch").to_pylist(),
            strict=True,
        )
    }
    estimated = sum(
        1
        for x, y in wanted
        if jaccard(sketches[x], sketches[y]) >= 0.6
        or run.sample_mod
        and containment(sketches[x], sketches[y]) >= max(cut, containment(sketches[y], sketches[x]))
    )
    return Quality(
        recall=found / max(len(wanted), 1),
        found=found,
        wanted=len(wanted),
        reported=reported,
        below_half=below,
        planted_recall=planted_found / max(len(planted_wanted), 1),
        estimator_recall=estimated / max(len(wanted), 1),
    )


def storage_table(runs: list[JobRun]) -> str:
    """Mean sketch rows per document by length band, one column per run."""
    bands = [(0, 1_500), (1_500, 3_500), (15_000, 30_000)]
    lines = ["| document words | docs | " + " | ".join(f"rows, {r.name}" for r in runs) + " |"]
    lines.append("|---|---|" + "---|" * len(runs))
    for lo, hi in bands:
        cells = []
        n = 0
        for r in runs:
            n_words = np.array(r.documents.column("n_words").to_pylist())
            sizes = np.array([len(s or []) for s in r.documents.column("sketch").to_pylist()])
            band = (n_words >= lo) & (n_words < hi)
            n = int(band.sum())
            cells.append(f"{sizes[band].mean():.0f}" if n else "-")
        lines.append(f"| {lo:,}-{hi:,} | {n} | " + " | ".join(cells) + " |")
    totals = [sum(len(s or []) for s in r.documents.column("sketch").to_pylist()) for r in runs]
    lines.append("| **all (total rows)** | | " + " | ".join(f"{t:,}" for t in totals) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.containment", description=__doc__.split("\n")[0])
    parser.add_argument("--long", type=int, default=160, help="long (20k-word) documents")
    parser.add_argument("--excerpts", type=int, default=300, help="planted 1k-word excerpts")
    parser.add_argument("--mods", default="16,32,64", help="m values of containment mode")
    parser.add_argument(
        "--cut", type=float, default=0.5, help="pairs.containment_threshold of the runs"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--reuse", action="store_true", help="evaluate the runs already made again")
    args = parser.parse_args(argv)
    mods = [int(m) for m in args.mods.split(",") if m]

    work = WORK / f"containment-l{args.long}-e{args.excerpts}-s{args.seed}"
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    corpus, planted = build_corpus(args.long, args.excerpts, args.seed)
    corpus_path = work / "corpus.parquet"
    pq.write_table(corpus, corpus_path)
    n_words = [len(t.split()) for t in corpus.column("text").to_pylist()]
    print(
        f"corpus: {len(n_words)} documents, {sum(n_words):,} words "
        f"({time.monotonic() - started:.0f} s)"
    )
    stage = time.monotonic()
    truth = exact_truth(corpus, width=4)
    wanted = truth.contained_pairs(0.8)
    print(
        f"exact truth: {len(wanted)} pairs with containment >= 0.8 "
        f"({time.monotonic() - stage:.0f} s)"
    )

    runs = [run_job("default", corpus_path, work, [], args.timeout, args.reuse)]
    print(f"default: {runs[0].wall:.0f} s")
    for m in mods:
        sets = [f"sketch.sample_mod={m}", f"pairs.containment_threshold={args.cut}"]
        runs.append(run_job(f"m={m}", corpus_path, work, sets, args.timeout, args.reuse))
        print(f"m={m}: {runs[-1].wall:.0f} s")

    kinds = Counter(r["kind"] for r in planted)
    exact_planted = [truth.containment(r["excerpt"], r["source"]) for r in planted]
    lines = [
        "# Containment mode on planted excerpts "
        f"({datetime.now(UTC).isoformat(timespec='seconds')})",
        "",
        f"Corpus: {args.long} long documents of ~{LONG_WORDS:,} words of real sentences, "
        f"{args.excerpts} planted {PASSAGE_WORDS:,}-word excerpts ({dict(kinds)}), 0-3% of words "
        f"edited; {len(n_words)} documents, {sum(n_words):,} words (seed {args.seed}). Exact "
        "containment of every excerpt in its source: median "
        f"{statistics.median(exact_planted):.2f}, "
        f"range {min(exact_planted):.2f}-{max(exact_planted):.2f}. Pairs of documents with exact "
        f"containment >= 0.8 (either direction): {len(wanted)}.",
        "",
        "Runs: spark-submit of jobs/near_duplicates.py, local[2], driver 3g, defaults but "
        f"sketch.sample_mod (and pairs.containment_threshold = {args.cut} in containment mode). "
        "The machine is shared with other jobs (load average well above its 2 cores): wall "
        "times are noisy, read their ratios loosely.",
        "",
        "## Quality",
        "",
        "recall: pairs with exact containment >= 0.8 found (as near_duplicate, or labelled in the "
        "right direction with estimate >= cut); false: reported excerpt pairs (a_in_b, b_in_a, "
        "estimate >= cut) whose exact containment in the labelled direction is < 0.5; planted "
        "recall: the same over the planted (excerpt, source or host) pairs only; estimator recall: "
        "the pairs >= 0.8 whose two sketches give an estimate at the cuts (what the pair table "
        "would hold if its candidate step lost nothing the estimator keeps).",
        "",
        "| run | cut | recall (>= 0.8) | planted recall | estimator recall | excerpt pairs "
        "reported | false (< 0.5) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        for cut in THRESHOLDS if r.sample_mod else (1.01,):
            if r.sample_mod and cut < args.cut:
                continue
            q = quality(r, truth, wanted, planted, cut)
            share = f"{q.below_half} ({q.below_half / q.reported:.1%})" if q.reported else "0"
            cut_text = f"{cut:.1f}" if r.sample_mod else "-"
            lines.append(
                f"| {r.name} | {cut_text} | {q.recall:.3f} ({q.found}/{q.wanted}) | "
                f"{q.planted_recall:.3f} | {q.estimator_recall:.3f} | {q.reported} | {share} |"
            )
    lines += ["", "## Storage: sketch rows per document", "", storage_table(runs), ""]
    lines += [
        "## Run time",
        "",
        "| run | wall (s) | sketch stage (s) | pair stage (s) | vs default (wall) | pairs |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        st = r.summary.get("stage_seconds", {})
        lines.append(
            f"| {r.name} | {r.wall:.0f} | {st.get('sketch', 0):.1f} | {st.get('pairs', 0):.1f} | "
            f"{r.wall / runs[0].wall:.2f} | {r.summary['pairs']['written']:,} |"
        )
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"containment-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.md"
    path.write_text(markdown)
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
