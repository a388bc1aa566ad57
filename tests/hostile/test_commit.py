"""Point 2: a commit says what it did, and a run killed at any commit step loses nothing.

The kills run ``AtomicOutput.commit`` in a child Python process (a local output needs no Spark
session) that the test hook ends with ``os._exit`` at each step; the next run's
``clean_leftovers`` must leave exactly one complete output and nothing beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shingling.spark.hooks import TEST_HOOK_ENV
from shingling.spark.storage import AtomicOutput

REPO = Path(__file__).resolve().parents[2]

COMMIT = """
import json, sys
from shingling.spark.storage import AtomicOutput
out = AtomicOutput(None, sys.argv[1], overwrite=True, job="near_duplicates")
out.write_text("pairs/part-0.parquet", "new pairs")
out.write_json("summary.json", {"job": "near_duplicates", "run": "new"})
print(out.run_id, flush=True)
out.commit()
"""


def previous_output(out: Path) -> None:
    (out / "pairs").mkdir(parents=True)
    (out / "pairs" / "part-0.parquet").write_text("old pairs")
    (out / "summary.json").write_text(json.dumps({"job": "near_duplicates", "run": "old"}))


def run_of(out: Path) -> str:
    return json.loads((out / "summary.json").read_text())["run"]


@pytest.mark.parametrize(
    ("point", "left_beside", "after_cleanup"),
    [
        (None, [], "new"),
        ("output_moved_aside", ["old", "tmp"], "old"),  # between the renames: the old one is back
        ("output_committed", ["old"], "new"),  # before deleting the old one: the new one stays
    ],
)
def test_a_kill_at_each_commit_step_leaves_one_whole_output(
    tmp_path: Path, point: str | None, left_beside: list[str], after_cleanup: str
) -> None:
    out = tmp_path / "out"
    previous_output(out)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop(TEST_HOOK_ENV, None)
    if point:
        env[TEST_HOOK_ENV] = f"{point}=exit"
    done = subprocess.run(
        [sys.executable, "-c", COMMIT, str(out)], env=env, capture_output=True, text=True
    )
    assert done.returncode == (97 if point else 0), done.stderr
    kinds = sorted(n.split(".")[1].split("-")[0] for n in os.listdir(tmp_path) if n != "out")
    assert kinds == left_beside
    if point == "output_moved_aside":
        assert not out.exists()  # the kill left no output in place: the next run restores it

    # the next run on the same output cleans up before it does anything
    nxt = AtomicOutput(None, str(out), overwrite=True, job="near_duplicates")
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert run_of(out) == after_cleanup
    assert (out / "pairs" / "part-0.parquet").read_text() == f"{after_cleanup} pairs"
    assert nxt.recovered == {
        "restored": int(point == "output_moved_aside"),
        "deleted": len(left_beside) - int(point == "output_moved_aside"),
    }


def test_a_leftover_that_the_job_reads_is_never_deleted(tmp_path: Path) -> None:
    # an input that happens to be named like a leftover of the output
    corpus = tmp_path / "out.tmp-0123456789ab"
    corpus.mkdir()
    (corpus / "part-0.parquet").write_text("the corpus")
    AtomicOutput(None, str(tmp_path / "out"), overwrite=False, reads={"--input": str(corpus)})
    assert (corpus / "part-0.parquet").read_text() == "the corpus"
