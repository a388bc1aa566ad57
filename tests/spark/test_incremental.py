"""shingling.spark.incremental: the nightly pair steps, sliced batches, and the probe table's reuse."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pyarrow as pa
import pytest
from pyspark import cloudpickle
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual
from testdata import licence_words, light_edits, sample_corpus

from shingling.fast import probe
from shingling.fast.sketch import sketch_batch
from shingling.normalize import words
from shingling.spark import incremental
from shingling.spark.incremental import nightly_pairs
from shingling.spark.stages import near_duplicate_pairs
from shingling.spark.transforms import sketch_documents

SETTINGS = {"threshold": 0.6, "k": 20, "max_exact_group": 100}


def documents(spark: SparkSession, rows: list[tuple[str, str]]):
    return spark.createDataFrame(rows, "doc_id string, text string").transform(
        sketch_documents, width=4, k=20
    )


def test_a_copy_of_a_text_of_another_slice_makes_its_pairs_once(spark: SparkSession) -> None:
    # an indexed copy of batch text b0 must stay a copy while the slice holding b1 (an edited
    # version of it) is probed; scored there, the pair (b1, its group) would come twice
    text = max((t for _, t in sample_corpus()), key=len)
    edited = " ".join(light_edits(words(text), 0.02, list(licence_words()), random.Random(5)))
    names = [f"b{i}" for i in range(20)]
    slice_of = dict(
        spark.createDataFrame([(n,) for n in names], "doc_id string")
        .select("doc_id", F.pmod(F.xxhash64("doc_id"), F.lit(2)))
        .collect()
    )
    b0 = next(n for n in names if slice_of[n] == 0)
    b1 = next(n for n in names if slice_of[n] == 1)
    index = documents(spark, [("a0", text)])
    batch = documents(spark, [(b0, text), (b1, edited)])
    full = near_duplicate_pairs(index.unionByName(batch), **SETTINGS)
    assert full.count() == 3  # the copies, and each with the edited text
    for slices in (1, 2):
        assertDataFrameEqual(nightly_pairs(batch, index, **SETTINGS, slices=slices), full)


def test_the_probe_table_is_built_once_per_process_for_every_task(monkeypatch) -> None:
    # Spark sends each task the scan function by value (cloudpickle); the table must still be
    # built once per Python worker, not once per task
    docs = [(d, t) for d, t in sample_corpus()[:50]]
    out = sketch_batch(pa.array([t for _, t in docs]), width=4, k=20)
    reps = pa.table(
        {
            "doc_id": [d for d, _ in docs],
            "n_shingles": pa.array(out.n_shingles, pa.int64()),
            "sketch": out.sketch,
            "text_hash": out.text_hash,
            "n_words": pa.array(out.n_words, pa.int64()),
        }
    ).filter(pa.compute.is_valid(out.sketch))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, reps.schema) as writer:
        writer.write_table(reps)
    shared = SimpleNamespace(value=sink.getvalue().to_pybytes())
    builds = []
    real = probe.ProbeTable

    def counted(*args, **kwargs):
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(probe, "ProbeTable", counted)
    scan = incremental._prober(shared, None, "table-1", k=20, threshold=0.6)
    rows = reps.append_column("in_batch", pa.array([True] * reps.num_rows))
    found = []
    for _ in range(3):  # three tasks, each with its own copy of the function
        task = cloudpickle.loads(cloudpickle.dumps(scan))
        found.append(sum(b.num_rows for b in task(iter(rows.to_batches(max_chunksize=7)))))
    assert len(builds) == 1
    assert found[0] == found[1] == found[2] > 0  # the sample corpus has near copies
    # another table (the next slice) replaces it
    other = cloudpickle.loads(
        cloudpickle.dumps(incremental._prober(shared, None, "table-2", k=20, threshold=0.6))
    )
    list(other(iter(rows.to_batches())))
    assert len(builds) == 2
    assert list(probe._TABLES) == ["table-2"]


@pytest.fixture(autouse=True)
def _no_tables_left() -> None:
    yield
    probe._TABLES.clear()
