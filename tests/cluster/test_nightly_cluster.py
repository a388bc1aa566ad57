"""The nightly job on a standalone cluster writes the pairs of one full run."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
from spark_standalone import CORPUS, REPO, read_sorted

KEYS = ["doc_a", "doc_b"]


def test_nightly_on_the_cluster_equals_a_full_run(
    cluster, local_reference: Path, tmp_path: Path
) -> None:
    # the batch's texts go to the executors as broadcasts, a slice of 100 texts at a time, and
    # each Python worker builds its probe tables from the shipped zip. One night into a new index
    # (one spark-submit: each costs about 35 s in this suite); tests/spark/test_nightly.py covers
    # nights against an existing index, sliced and not, in local mode
    cluster.ensure_workers(2)
    args = ["--batch", str(CORPUS), "--index", str(tmp_path / "index"),
            "--output", str(tmp_path / "pairs"), "--run-date", "2026-12-01",
            "--set", "index.probe_documents=100"]  # fmt: skip
    run = cluster.submit(tmp_path / "out", *args, job=REPO / "jobs" / "nightly.py")
    assert run.wait() == 0, f"the nightly run failed:\n{run.logs()[-4000:]}"
    full = read_sorted(local_reference / "pairs", KEYS)
    nightly = ds.dataset(tmp_path / "pairs", format="parquet", partitioning="hive").to_table()
    nightly = nightly.select(full.column_names)
    got = nightly.take(pa.compute.sort_indices(nightly, [(k, "ascending") for k in KEYS]))
    assert got.num_rows == full.num_rows > 0
    assert got.cast(full.schema).equals(full)
