"""Nightly run vs full run, side by side: does the cost grow with the batch, not the corpus?

    python -m bench.nightly_bench --docs 100000 [--batches 0.001,0.01] [--driver-memory 3g]

Takes the benchmark corpus (bench/corpus.py), holds out one random batch per fraction of
``--batches`` (disjoint; the corpus is read one file at a time, so a 10M corpus splits in bounded
memory) and indexes the rest (a full run, then jobs/build_index.py: setup, timed apart). Then,
in the same invocation and on the same machine, it times as whole ``spark-submit`` processes (JVM
start-up included):

- the **full run**: jobs/near_duplicates.py over the whole corpus (index and batch);
- the **nightly runs**: jobs/nightly.py with each batch against the index, in the order given
  (each night adds its batch to the index, as in production);
- the **nightly floor**: bench/peers/sketch_floor.py, which only reads the batch, sketches it and
  writes the sketches (what any nightly run costs before it touches the index).

Both find the same pairs involving the batch (tests/spark/test_nightly.py checks that on real text);
this measures what they cost. Results go to bench/results/nightly-<docs>-<time>.json,
bench/work/nightly-<docs>/result.json and stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from bench.corpus import WORK, CorpusSpec, build

REPO = Path(__file__).resolve().parents[1]


def spark_submit(script: str, args: list[str], driver_memory: str, log: Path) -> tuple[float, int]:
    """Run a job as spark-submit does; returns (wall seconds, exit code)."""
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    cmd = [
        str(bin_dir / "spark-submit"), "--properties-file", "conf/spark-local.conf",
        "--driver-memory", driver_memory, "--conf", "spark.ui.showConsoleProgress=false",
        str(REPO / script), *args,
    ]  # fmt: skip
    started = time.monotonic()
    with open(log, "w") as out:
        code = subprocess.run(
            cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
        ).returncode
    return time.monotonic() - started, code


def last_json(log: Path) -> dict:
    """The summary JSON a job prints last (after Spark's log lines)."""
    text = log.read_text(errors="replace")
    start = text.rfind("\n{\n")
    if start < 0:
        return {}
    summary, _ = json.JSONDecoder().raw_decode(text[start + 1 :])  # log lines may follow it
    return dict(summary)


def split(
    corpus_dir: Path, fractions: list[float], seed: int, work: Path
) -> tuple[Path, list[Path], int, list[int]]:
    """Write the index part and one batch per fraction (disjoint); returns their paths and sizes.

    One corpus file at a time (a 10M corpus is 14 GB of text): each file's rows go to the index
    part (one file per corpus file, so Spark reads it in parallel) or to a batch, drawn at random.
    """
    index_part = work / "index_part"
    shutil.rmtree(index_part, ignore_errors=True)
    index_part.mkdir(parents=True)
    batches = [work / f"batch-{i}.parquet" for i in range(len(fractions))]
    rng = np.random.default_rng(seed)
    writers: list[pq.ParquetWriter | None] = [None] * len(fractions)
    n_index, n_batches = 0, [0] * len(fractions)
    files = sorted(ds.dataset(corpus_dir, format="parquet").files)
    for number, file in enumerate(files):
        table = pq.read_table(file, columns=["doc_id", "text"])
        draw = rng.random(table.num_rows)
        rest = np.ones(table.num_rows, dtype=bool)
        low = 0.0
        for i, fraction in enumerate(fractions):
            chosen = (draw >= low) & (draw < low + fraction)
            low += fraction
            rest &= ~chosen
            if chosen.any():
                part = table.filter(pa.array(chosen))
                if writers[i] is None:
                    writers[i] = pq.ParquetWriter(batches[i], part.schema)
                writers[i].write_table(part)  # type: ignore[union-attr]
                n_batches[i] += part.num_rows
        kept = table.filter(pa.array(rest))
        pq.write_table(kept, index_part / f"part-{number:03d}.parquet")
        n_index += kept.num_rows
        del table, kept
    for writer in writers:
        if writer is not None:
            writer.close()
    return index_part, batches, n_index, n_batches


def write_result(name: str, result: dict[str, Any]) -> str:
    """``result`` with the machine it ran on, as JSON in bench/results/<name>-<time>.json; returns
    the text written."""
    result["machine"] = {
        "cores": os.cpu_count(),
        "load_average_1m": os.getloadavg()[0],
        "python": platform.python_version(),
    }
    text = json.dumps(result, indent=2) + "\n"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    (REPO / "bench" / "results" / f"{name}-{stamp}.json").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench.nightly_bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--docs", type=int, default=100_000, help="corpus size (index + batches)")
    parser.add_argument(
        "--batches",
        default="0.01",
        help="comma-separated fractions of the corpus, one disjoint batch each, run as successive"
        " nights in this order (default 0.01; e.g. 0.001,0.01)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--driver-memory", default="3g")
    args = parser.parse_args(argv)
    fractions = [float(f) for f in args.batches.split(",") if f.strip()]

    corpus = build(CorpusSpec(docs=args.docs))
    work = WORK / f"nightly-{args.docs}"
    for name in ("full_index_part", "full", "index", "pairs", "floor"):
        shutil.rmtree(work / name, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    index_part, batches, n_index, n_batches = split(corpus.path, fractions, args.seed, work)
    split_seconds = time.monotonic() - started
    mem = args.driver_memory
    print(f"corpus {corpus.path}: {n_index} documents to index, batches of {n_batches}", flush=True)

    # setup: index everything but the batches
    setup = {"split_corpus": split_seconds}
    setup["full_run_of_index_part"], code = spark_submit(
        "jobs/near_duplicates.py",
        ["--input", str(index_part), "--output", str(work / "full_index_part")],
        mem, work / "setup-full.log",
    )  # fmt: skip
    assert code == 0, (work / "setup-full.log").read_text()[-3000:]
    setup["build_index"], code = spark_submit(
        "jobs/build_index.py", ["--run", str(work / "full_index_part"), "--index", str(work / "index"),
                           "--run-date", "2026-11-30", "--output", str(work / "pairs")],
        mem, work / "setup-build.log",
    )  # fmt: skip
    assert code == 0, (work / "setup-build.log").read_text()[-3000:]

    # side by side: the full run over everything, then each night's run and its floor
    full_seconds, code = spark_submit(
        "jobs/near_duplicates.py", ["--input", str(corpus.path), "--output", str(work / "full")],
        mem, work / "full.log",
    )  # fmt: skip
    assert code == 0, (work / "full.log").read_text()[-3000:]
    nights = []
    for night, (fraction, batch, n_batch) in enumerate(
        zip(fractions, batches, n_batches, strict=True), start=1
    ):
        log = work / f"nightly-{night}.log"
        nightly_seconds, code = spark_submit(
            "jobs/nightly.py",
            ["--batch", str(batch), "--index", str(work / "index"), "--output", str(work / "pairs"),
             "--run-date", f"2026-12-{night:02d}"],
            mem, log,
        )  # fmt: skip
        assert code == 0, log.read_text()[-3000:]
        shutil.rmtree(work / "floor", ignore_errors=True)
        floor_seconds, code = spark_submit(
            "bench/peers/sketch_floor.py",
            ["--input", str(batch), "--output", str(work / "floor")],
            mem, work / f"floor-{night}.log",
        )  # fmt: skip
        assert code == 0, (work / f"floor-{night}.log").read_text()[-3000:]
        nights.append(
            {
                "batch_fraction": fraction,
                "batch_documents": n_batch,
                "nightly_seconds": round(nightly_seconds, 1),
                "nightly_over_full": round(nightly_seconds / full_seconds, 3),
                "floor_seconds": round(floor_seconds, 1),
                "floor_over_full": round(floor_seconds / full_seconds, 3),
                "nightly_summary": last_json(log),
            }
        )
        print(json.dumps(nights[-1], indent=2), flush=True)

    result = {
        "docs": args.docs,
        "index_documents": n_index,
        "full_run_seconds": round(full_seconds, 1),
        "nights": nights,
        "setup_seconds": {k: round(v, 1) for k, v in setup.items()},
        "full_summary": json.loads((work / "full" / "summary.json").read_text()),
        "driver_memory": mem,
    }
    text = write_result(f"nightly-{args.docs}", result)
    (work / "result.json").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
