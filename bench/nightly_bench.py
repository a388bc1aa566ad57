"""Nightly run vs full run, side by side: does the cost grow with the batch, not the corpus?

    python -m bench.nightly_bench --docs 100000 [--batch-fraction 0.01] [--driver-memory 3g]

Takes the benchmark corpus (bench/corpus.py), holds out a random ``--batch-fraction`` of it as the
night's batch and indexes the rest (a full run, then jobs/build_index.py: setup, timed apart). Then,
in the same invocation and on the same machine, it times as whole ``spark-submit`` processes (JVM
start-up included):

- the **full run**: jobs/near_duplicates.py over the whole corpus (index and batch);
- the **nightly run**: jobs/nightly.py with the batch against the index;
- the **nightly floor**: bench/peers/sketch_floor.py, which only reads the batch, sketches it and
  writes the sketches (what any nightly run costs before it touches the index).

Both find the same pairs involving the batch (tests/jobs/test_nightly.py checks that on real text);
this measures what they cost. Results go to bench/work/nightly-<docs>/result.json and stdout.
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
from pathlib import Path

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


def split(corpus_dir: Path, fraction: float, seed: int, work: Path) -> tuple[Path, Path, int, int]:
    """Write the index part and the batch part of the corpus; returns their paths and sizes."""
    table = ds.dataset(corpus_dir, format="parquet").to_table(columns=["doc_id", "text"])
    rng = np.random.default_rng(seed)
    in_batch = np.zeros(table.num_rows, dtype=bool)
    in_batch[
        rng.choice(table.num_rows, size=max(1, int(table.num_rows * fraction)), replace=False)
    ] = True
    index_part, batch = work / "index_part", work / "batch.parquet"
    if index_part.exists():
        shutil.rmtree(index_part)
    index_part.mkdir(parents=True)
    rest = table.filter(pa.array(~in_batch))
    step = -(-rest.num_rows // 4)
    for i in range(4):  # several files, so Spark reads in parallel
        pq.write_table(rest.slice(i * step, step), index_part / f"part-{i}.parquet")
    pq.write_table(table.filter(pa.array(in_batch)), batch)
    return index_part, batch, rest.num_rows, int(in_batch.sum())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench.nightly_bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--docs", type=int, default=100_000, help="corpus size (index + batch)")
    parser.add_argument("--batch-fraction", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--driver-memory", default="3g")
    args = parser.parse_args(argv)

    corpus = build(CorpusSpec(docs=args.docs))
    work = WORK / f"nightly-{args.docs}"
    for name in ("full_index_part", "full", "index", "pairs", "floor"):
        shutil.rmtree(work / name, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    index_part, batch, n_index, n_batch = split(corpus.path, args.batch_fraction, args.seed, work)
    mem = args.driver_memory
    print(f"corpus {corpus.path}: {n_index} documents to index, a batch of {n_batch}", flush=True)

    # setup: index everything but the batch
    setup = {}
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

    # side by side: the full run over everything, then the night's run
    full_seconds, code = spark_submit(
        "jobs/near_duplicates.py", ["--input", str(corpus.path), "--output", str(work / "full")],
        mem, work / "full.log",
    )  # fmt: skip
    assert code == 0, (work / "full.log").read_text()[-3000:]
    nightly_seconds, code = spark_submit(
        "jobs/nightly.py",
        ["--batch", str(batch), "--index", str(work / "index"), "--output", str(work / "pairs"),
                       "--run-date", "2026-12-01"],
        mem, work / "nightly.log",
    )  # fmt: skip
    assert code == 0, (work / "nightly.log").read_text()[-3000:]
    floor_seconds, code = spark_submit(
        "bench/peers/sketch_floor.py",
        ["--input", str(batch), "--output", str(work / "floor")],
        mem, work / "floor.log",
    )  # fmt: skip
    assert code == 0, (work / "floor.log").read_text()[-3000:]

    result = {
        "docs": args.docs,
        "index_documents": n_index,
        "batch_documents": n_batch,
        "full_run_seconds": round(full_seconds, 1),
        "nightly_seconds": round(nightly_seconds, 1),
        "nightly_over_full": round(nightly_seconds / full_seconds, 3),
        "floor_seconds": round(floor_seconds, 1),
        "floor_over_full": round(floor_seconds / full_seconds, 3),
        "setup_seconds": {k: round(v, 1) for k, v in setup.items()},
        "nightly_summary": last_json(work / "nightly.log"),
        "full_summary_pairs": json.loads((work / "full" / "summary.json").read_text()).get("pairs"),
        "machine": {
            "cores": os.cpu_count(),
            "load_average_1m": os.getloadavg()[0],
            "python": platform.python_version(),
        },
    }
    (work / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
