"""Thirty nights later: does an index that grew by nightly segments cost more to read than one
compacted index of the same documents?

    python -m bench.index_nights --docs 1000000 [--nights 30] [--fraction 0.001]

One invocation, on the benchmark corpus (bench/corpus.py): the corpus less ``nights + 1`` disjoint
batches of ``fraction`` each is indexed (a full run, then jobs/build_index.py); ``nights`` nightly
runs (jobs/nightly.py) each add one batch, as a production index grows. A second index holds the
same documents in one segment (a full run over the index part and the nights' batches, then
build_index). A third is the grown index compacted (a copy of it, then jobs/compact_index.py).
Then, side by side, each a whole spark-submit process:

- **read**: bench/peers/index_read.py on each index (every live sketch and text, as a night reads
  them);
- **the next night**: jobs/nightly.py with the last batch against each index; the grown index and
  its compacted copy must write the same pairs (checked).

Written to bench/results/index-nights-<docs>-<time>.json and stdout.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from bench.corpus import WORK, CorpusSpec, build
from bench.nightly_bench import last_json, spark_submit, split, write_result


def disk_files(root: Path) -> tuple[int, int]:
    """Files and bytes under ``root``."""
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def night_pairs(pairs: Path, run_date: str = "2026-12-01") -> list[tuple]:
    """The rows of one night's partition of a pair table, sorted."""
    table = pq.read_table(pairs / f"run_date={run_date}")
    return sorted(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench.index_nights", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--nights", type=int, default=30)
    parser.add_argument("--fraction", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--driver-memory", default="3g")
    args = parser.parse_args(argv)
    mem = args.driver_memory

    corpus = build(CorpusSpec(docs=args.docs))
    work = WORK / f"index-nights-{args.docs}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    index_part, batches, n_index, n_batches = split(
        corpus.path, [args.fraction] * (args.nights + 1), args.seed, work
    )
    *nights, probe = batches
    print(f"{n_index} documents indexed, {args.nights} nights of {n_batches[:-1]}", flush=True)
    seconds: dict[str, Any] = {}

    def submit(name: str, script: str, arguments: list[str]) -> float:
        took, code = spark_submit(script, arguments, mem, work / f"{name}.log")
        assert code == 0, (work / f"{name}.log").read_text()[-3000:]
        seconds[name] = round(took, 1)
        return took

    # the grown index: one build, then a segment a night
    submit("full-run", "jobs/near_duplicates.py",
           ["--input", str(index_part), "--output", str(work / "run")])  # fmt: skip
    submit("build", "jobs/build_index.py",
           ["--run", str(work / "run"), "--index", str(work / "grown"), "--run-date", "2026-10-31",
            "--output", str(work / "grown-pairs")])  # fmt: skip
    night_seconds = []
    for night, batch in enumerate(nights, start=1):
        night_seconds.append(
            submit(f"night-{night}", "jobs/nightly.py",
                   ["--batch", str(batch), "--index", str(work / "grown"),
                    "--output", str(work / "grown-pairs"), "--run-date", f"2026-11-{night:02d}"])
        )  # fmt: skip
    # the compacted index: the same documents in one segment
    together = work / "together"
    together.mkdir()
    for i, part in enumerate(sorted(index_part.iterdir())):
        os.link(part, together / f"index-{i:03d}.parquet")
    for i, batch in enumerate(nights):
        os.link(batch, together / f"night-{i:03d}.parquet")
    submit("compacted-full-run", "jobs/near_duplicates.py",
           ["--input", str(together), "--output", str(work / "run-all")])  # fmt: skip
    submit("compacted-build", "jobs/build_index.py",
           ["--run", str(work / "run-all"), "--index", str(work / "compacted"),
            "--run-date", "2026-11-30", "--output", str(work / "compacted-pairs")])  # fmt: skip

    # the grown index compacted: a copy (hard links: compaction replaces the manifest by a rename
    # and deletes whole segments, so the grown index keeps its files), then jobs/compact_index.py
    for suffix in ("", "-pairs"):
        shutil.copytree(
            work / f"grown{suffix}",
            work / f"grown-compacted{suffix}",
            copy_function=os.link,
            ignore=shutil.ignore_patterns("_lock"),  # written in place by each run's lock
        )
    submit("compact", "jobs/compact_index.py", ["--index", str(work / "grown-compacted")])
    compaction = last_json(work / "compact.log")

    # side by side: reading each, then the next night against each
    names = ("grown", "compacted", "grown-compacted")
    reads = {}
    for name in names:
        submit(f"read-{name}", "bench/peers/index_read.py", ["--index", str(work / name)])
        reads[name] = last_json(work / f"read-{name}.log")
    for name in names:
        submit(f"next-night-{name}", "jobs/nightly.py",
               ["--batch", str(probe), "--index", str(work / name),
                "--output", str(work / f"{name}-pairs"), "--run-date", "2026-12-01"])  # fmt: skip
    same = night_pairs(work / "grown-pairs") == night_pairs(work / "grown-compacted-pairs")
    assert same, "the next night wrote other pairs against the compacted copy"
    result = {
        "docs": args.docs,
        "nights": args.nights,
        "batch_documents": n_batches,
        "indexed_at_build": n_index,
        "seconds": seconds,
        "nightly_seconds": {
            "first": night_seconds[0],
            "last": night_seconds[-1],
            "mean": round(sum(night_seconds) / len(night_seconds), 1),
        },
        "read_grown_over_compacted": round(seconds["read-grown"] / seconds["read-compacted"], 3),
        "next_night_grown_over_compacted": round(
            seconds["next-night-grown"] / seconds["next-night-compacted"], 3
        ),
        "read_grown_compacted_over_compacted": round(
            seconds["read-grown-compacted"] / seconds["read-compacted"], 3
        ),
        "next_night_grown_compacted_over_compacted": round(
            seconds["next-night-grown-compacted"] / seconds["next-night-compacted"], 3
        ),
        "next_night_same_pairs_after_compaction": same,
        "compaction": compaction,
        "reads": reads,
        "files": {
            name: dict(zip(("files", "bytes"), disk_files(work / name), strict=True))
            for name in names
        },
        "next_night_summaries": {
            name: last_json(work / f"next-night-{name}.log") for name in names
        },
    }
    print(write_result(f"index-nights-{args.docs}", result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
