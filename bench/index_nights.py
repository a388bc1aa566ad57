"""Thirty nights later: does an index that grew by nightly segments cost more to read than one
compacted index of the same documents?

    python -m bench.index_nights --docs 1000000 [--nights 30] [--fraction 0.001]

One invocation, on the benchmark corpus (bench/corpus.py): the corpus less ``nights + 1`` disjoint
batches of ``fraction`` each is indexed (a full run, then jobs/build_index.py); ``nights`` nightly
runs (jobs/nightly.py) each add one batch, as a production index grows. A second index holds the
same documents in one segment (a full run over the index part and the nights' batches, then
build_index). Then, side by side, each a whole spark-submit process:

- **read**: bench/peers/index_read.py on each index (every live sketch and text, as a night reads
  them);
- **the next night**: jobs/nightly.py with the last batch against each index.

Written to bench/results/index-nights-<docs>-<time>.json and stdout.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

from bench.corpus import WORK, CorpusSpec, build
from bench.nightly_bench import last_json, spark_submit, split, write_result


def disk_files(root: Path) -> tuple[int, int]:
    """Files and bytes under ``root``."""
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


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

    # side by side: reading each, then the next night against each
    reads = {}
    for name in ("grown", "compacted"):
        submit(f"read-{name}", "bench/peers/index_read.py", ["--index", str(work / name)])
        reads[name] = last_json(work / f"read-{name}.log")
    for name in ("grown", "compacted"):
        submit(f"next-night-{name}", "jobs/nightly.py",
               ["--batch", str(probe), "--index", str(work / name),
                "--output", str(work / f"{name}-pairs"), "--run-date", "2026-12-01"])  # fmt: skip
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
        "reads": reads,
        "files": {
            name: dict(zip(("files", "bytes"), disk_files(work / name), strict=True))
            for name in ("grown", "compacted")
        },
        "next_night_summaries": {
            name: last_json(work / f"next-night-{name}.log") for name in ("grown", "compacted")
        },
    }
    print(write_result(f"index-nights-{args.docs}", result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
