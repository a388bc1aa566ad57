"""A job's steps: their start and end lines, and progress lines in between for a long step."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from shingling.spark.session import Steps


def test_a_long_step_says_how_far_its_tasks_are(
    spark: SparkSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="shingling")

    def slowly(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            time.sleep(0.5)
            yield batch

    steps = Steps(spark, 2, progress_every=0.2)
    steps.start("waiting", "four slow tasks")
    rows = spark.range(0, 4, numPartitions=4).mapInArrow(slowly, "id long").count()
    steps.done(f"{rows} rows")
    lines = [m for m in caplog.messages if m.startswith("step 1 of 2: waiting")]
    progress = [m for m in lines if " tasks done in " in m]
    assert progress, lines
    assert all(re.search(r": \d+ of \d+ tasks done in \d+ running stages? \(", m) for m in progress)
    assert lines[-1].startswith("step 1 of 2: waiting done in ")
    # no progress line once the step is done
    time.sleep(0.5)
    assert [m for m in caplog.messages if " tasks done in " in m] == progress
