"""One SparkSession for the whole test run (local[2], few shuffle partitions, UI off)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis' per-example deadline is a timing assertion; on a shared 2-core machine it fails on
# noise, so it is off for the whole suite.
settings.register_profile("shingling", deadline=None)
settings.load_profile("shingling")

# the Python workers must be this interpreter, with this project importable
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


CODEGEN = "true" if os.environ.get("SHINGLING_TEST_CODEGEN") == "1" else "false"


@pytest.fixture(scope="session")
def spark() -> Iterator:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("shingling-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "500")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        # the tests' tables are tiny: compiling each plan to Java costs more CPU than running it
        # interpreted (Spark's own suites run both); SHINGLING_TEST_CODEGEN=1 compiles as the jobs do
        .config("spark.sql.codegen.wholeStage", CODEGEN)
        .config("spark.sql.codegen.factoryMode", "FALLBACK" if CODEGEN == "true" else "NO_CODEGEN")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --- tiers ------------------------------------------------------------------------------------------
# fast:   no JVM: the library, the compiled path, the CLI, the docs (`make test-fast`, under 2 min)
# spark:  a SparkSession in this process, or spark-submit (`make test`)
# history: several runs of a job on one index or output (three nights, a compaction between
#         nights, an undo) checked against one full run (`make test-history`; in CI, not in
#         `make test`: each night is about a hundred small Spark jobs)
# e2e:    whole processes as a user runs them: spark-submit, the launcher, the docs' commands as
#         printed, the installed wheel (`make test-e2e`; in the spark tier too, not in `make test`)
# slow:   long runs outside the default suite
# A test is in the spark tier when it (or a fixture it uses) requests the `spark` fixture or the
# `jvm` fixture (for spark-submit and jobs run in-process), or is marked `pytest.mark.spark`.
# `make test-fast` runs the rest with SPARK_HOME pointing nowhere, so a test that starts a JVM
# without saying so fails there instead of hiding.


@pytest.fixture(scope="session")
def jvm() -> None:
    """Requested by tests and fixtures that start a JVM other than through ``spark``."""


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.get_closest_marker("e2e") and not item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.spark)  # a whole process starts a JVM too
        uses = set(getattr(item, "fixturenames", ()))
        on_cluster = "cluster" in Path(str(item.fspath)).parts  # a standalone cluster's JVMs
        if (uses & {"spark", "jvm"} or on_cluster) and not item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.spark)
