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
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --- tiers ------------------------------------------------------------------------------------------
# fast:   no JVM: the library, the compiled path, the CLI, the docs (`make test-fast`, under 2 min)
# spark:  a SparkSession in this process, or spark-submit (`make test`)
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
        uses = set(getattr(item, "fixturenames", ()))
        on_cluster = "cluster" in Path(str(item.fspath)).parts  # a standalone cluster's JVMs
        if (uses & {"spark", "jvm"} or on_cluster) and not item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.spark)
