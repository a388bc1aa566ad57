"""The job submitted to a standalone cluster writes exactly what it writes in local mode."""

from __future__ import annotations

from pathlib import Path

from spark_standalone import assert_same_output


def test_cluster_run_equals_local_mode(cluster, local_reference: Path, tmp_path: Path) -> None:
    cluster.ensure_workers(2)
    before = cluster.app_ids()
    run = cluster.submit(tmp_path / "out")
    assert run.wait() == 0, f"the cluster run failed:\n{run.logs()[-4000:]}"
    # the work went to the cluster: one new application, with an executor on each worker
    (app_id,) = cluster.app_ids() - before
    workers = {d.parent.parent.name for d in cluster.executor_dirs(app_id)}
    assert workers == {"worker1-work", "worker2-work"}, f"executors of {app_id} ran in {workers}"
    assert_same_output(run.output, local_reference)
    assert run.summary()["status"] == "succeeded"
