"""The nightly job on a standalone cluster: its pairs over two nights equal one full run's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from spark_standalone import CORPUS, REPO, read_sorted

KEYS = ["doc_a", "doc_b"]


def test_nightly_on_the_cluster_equals_a_full_run(
    cluster, local_reference: Path, tmp_path: Path
) -> None:
    # the batch's texts go to the executors as a broadcast and each Python worker builds its probe
    # table from the shipped zip; two nights, the second with the batch held in slices of 100
    cluster.ensure_workers(2)
    corpus = pq.read_table(CORPUS)
    cut = corpus.num_rows // 2
    nights = [corpus.slice(0, cut), corpus.slice(cut)]
    for i, night in enumerate(nights):
        batch = tmp_path / f"night{i}.parquet"
        pq.write_table(night, batch)
        args = ["--batch", str(batch), "--index", str(tmp_path / "index"),
                "--output", str(tmp_path / "pairs"), "--run-date", f"2026-12-0{i + 1}"]  # fmt: skip
        if i:
            args += ["--set", "index.probe_documents=100"]
        run = cluster.submit(tmp_path / f"out{i}", *args, job=REPO / "jobs" / "nightly.py")
        assert run.wait() == 0, f"night {i} failed:\n{run.logs()[-4000:]}"
    nightly = ds.dataset(tmp_path / "pairs", format="parquet", partitioning="hive").to_table()
    nightly = nightly.drop(["run_date"]).select(
        pq.read_table(local_reference / "pairs").column_names
    )
    full = read_sorted(local_reference / "pairs", KEYS)
    got = nightly.take(pa.compute.sort_indices(nightly, [(k, "ascending") for k in KEYS]))
    assert got.num_rows == full.num_rows > 0
    assert got.cast(full.schema).equals(full)
