"""Fixtures of the cluster tests: a standalone cluster on loopback and the local-mode reference.

See spark_standalone.py for how the cluster is started and torn down. If the machine cannot start
it, the tests are skipped with the reason; with SHINGLING_REQUIRE_CLUSTER=1 (make test-cluster)
that is a failure instead.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from spark_standalone import (
    CORPUS,
    QUICK_JVM,
    REPO,
    Cluster,
    ClusterUnavailable,
    build_zip,
    deps_only_python,
    launch_submit,
    log_tail,
    spark_env,
)


def _unavailable(reason: str) -> None:
    message = f"cannot start a Spark standalone cluster on this machine: {reason}"
    if os.environ.get("SHINGLING_REQUIRE_CLUSTER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def cluster_tools(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shipped zip and the deps-only Python, for the cluster runs and the local reference."""
    root = tmp_path_factory.mktemp("cluster-tools")
    return build_zip(root / "dist" / "shingling.zip"), deps_only_python(root / "venv")


@pytest.fixture(scope="session")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Cluster]:
    """A master and two workers (1 core, 1 GiB each) on 127.0.0.1, stopped after the session."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _unavailable("no Java (java is not on PATH and JAVA_HOME is unset)")
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
    except OSError as e:
        _unavailable(f"cannot bind a port on 127.0.0.1: {e}")
    root = tmp_path_factory.mktemp("cluster")
    zip_path, python = request.getfixturevalue("cluster_tools")  # only once Java is known to exist
    cluster = Cluster(root=root, env=spark_env(python, root), zip_path=zip_path)
    try:
        cluster.start_master()
        cluster.ensure_workers(2)
    except ClusterUnavailable as e:
        cluster.stop()
        _unavailable(str(e))
    try:
        yield cluster
    finally:
        cluster.stop()


LOG4J = "-Dlog4j2.configurationFile=conf/log4j2.properties"


@pytest.fixture(scope="session")
def local_reference(
    tmp_path_factory: pytest.TempPathFactory, cluster_tools: tuple[Path, Path], cluster: Cluster
) -> Path:
    """The job's output on the sample corpus in local mode (as ``make run`` runs it), made once.

    Depends on ``cluster`` only so that it is not run when the cluster tests are skipped.
    """
    root = tmp_path_factory.mktemp("local")
    zip_path, python = cluster_tools
    run = launch_submit(
        [
            "--properties-file",
            str(REPO / "conf" / "spark-local.conf"),
            "--driver-memory",
            "2g",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",  # spark-local.conf's log settings, and a JVM quicker to start
            f"spark.driver.extraJavaOptions={LOG4J} {QUICK_JVM}",
        ],
        zip_path,
        spark_env(python, root),
        CORPUS,
        root / "out",
        (),
        root,
    )
    assert run.wait() == 0, f"the local-mode run failed:\n{log_tail(run.stderr, 40)}"
    return run.output
