"""The job on a real cluster: it writes what local mode writes, on both workers, and survives faults:
a node lost in the pair stage, a job killed while it writes."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from spark_standalone import assert_same_output, free_port, kill_group, stop_group, tree_digest


def _wait_for(condition: Callable[[], object], what: str, run, timeout: float = 120.0) -> object:
    """Poll ``condition`` until it returns something truthy; fail if the job ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        if run.proc.poll() is not None:
            pytest.fail(
                f"the job ended (exit {run.proc.returncode}) before {what}:\n{run.logs()[-3000:]}"
            )
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def _active_stages(ui_port: int) -> list[dict]:
    """The driver's running stages with a task running, from its monitoring REST API."""
    base = f"http://127.0.0.1:{ui_port}/api/v1/applications"
    try:
        with urllib.request.urlopen(base, timeout=2) as r:
            (app,) = json.load(r)
        with urllib.request.urlopen(f"{base}/{app['id']}/stages?status=active", timeout=2) as r:
            return [s for s in json.load(r) if s["numActiveTasks"] > 0]
    except (OSError, ValueError):
        return []  # the UI is not up yet


def test_job_killed_while_writing_keeps_previous_output_and_a_rerun_equals_local_mode(
    cluster, local_reference: Path, tmp_path: Path
) -> None:
    cluster.ensure_workers(2)
    out = tmp_path / "out"
    shutil.copytree(local_reference, out)  # a previous night's output
    before = tree_digest(out)
    run = cluster.submit(out, "--overwrite")
    try:
        staged = _wait_for(
            lambda: [p for p in tmp_path.glob("out.tmp-*/**/*") if p.is_file()],
            "the staging directory had files",
            run,
        )
        # SIGKILL spark-submit, its driver JVM and its Python: no clean-up code runs
        kill_group(run.proc)
        run.proc.wait(10)
    finally:
        stop_group(run.proc, grace=1)
    assert run.proc.returncode != 0
    assert staged, "nothing was being written when the job was killed"
    assert tree_digest(out) == before, "the previous output changed"
    assert not list(tmp_path.glob("out.old-*")), "the previous output was moved aside"

    # the re-run, undisturbed: the work goes to the cluster (one new application, an executor on
    # each worker) and the output is local mode's
    before_apps = cluster.app_ids()
    rerun = cluster.submit(out, "--overwrite")
    assert rerun.wait() == 0, f"the re-run failed:\n{rerun.logs()[-4000:]}"
    (app_id,) = cluster.app_ids() - before_apps
    workers = {d.parent.parent.name for d in cluster.executor_dirs(app_id)}
    assert workers == {"worker1-work", "worker2-work"}, f"executors of {app_id} ran in {workers}"
    assert_same_output(out, local_reference)
    assert rerun.summary()["status"] == "succeeded"


def test_worker_lost_in_pair_stage_same_output(
    cluster, local_reference: Path, tmp_path: Path
) -> None:
    cluster.ensure_workers(2)
    ui_port = free_port()
    # the driver's UI only to see which stages run
    run = cluster.submit(
        tmp_path / "out",
        conf={
            "spark.ui.enabled": "true",
            "spark.ui.port": str(ui_port),
        },
    )
    _wait_for(lambda: "step 2 of 3: pairing" in run.logs(), "the pair step started", run)
    stages = _wait_for(lambda: _active_stages(ui_port), "a pair stage ran tasks", run)
    cluster.kill_worker(2)  # the next test that needs two workers starts it again
    killed_in = [f"{s['stageId']}: {s['name']}" for s in stages]
    assert run.proc.poll() is None, "the job ended before the worker was killed"
    status = run.wait()
    logs = run.logs()
    assert status == 0, (
        f"the job did not survive losing a worker (killed in stage {killed_in}):\n{logs[-4000:]}"
    )
    assert "Lost executor" in logs or "ExecutorLost" in logs, (
        "the driver never noticed the lost worker"
    )
    assert_same_output(run.output, local_reference)
