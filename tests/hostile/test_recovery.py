"""Issue 34, point 1: recovery deletes only what this run or this index owns.

An --index that is not an index of ours, and a pair table of another index, are refused (exit 2)
before anything is written or deleted; recovery moves and deletes only paths inside this run's
--index and --output, whatever a manifest records; and it deletes only the staging this index
marked. Every byte of the user's files outside the job's own output is checked before and after.

Most cases need no Spark: the refusals run before the session starts, and an index is committed
here by hand through the store (a local index needs no session), as tests/spark/test_index_store.py
does. One case runs a failing night in process with the session fixture.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile_helpers import claimed, committed, snapshot

from shingling.errors import BadInputError
from shingling.index import IDENTITY, Manifest, SegmentInfo
from shingling.spark import session
from shingling.spark.index.published import OWNER
from shingling.spark.jobs import build_index, compact_index, nightly

DATE = "2026-12-01"


def user_folder(root: Path) -> Path:
    """A user's directory that happens to hold what an index and a pair table hold."""
    for name, text in [
        ("segments/000001-aaaaaaaaaaaa/notes.txt", "chapter one"),
        ("segments/drafts/two.txt", "chapter two"),
        ("_versions/00000007.json", '{"mine": true}'),
        ("_staging/0123456789ab/run_date=2026-11-30/part.txt", "staged by hand"),
        ("run_date=2026-11-30/photo.jpg", "not a partition of ours"),
        ("thesis.tex", "no backup"),
    ]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def batch(tmp_path: Path) -> Path:
    path = tmp_path / "batch.parquet"
    pq.write_table(pa.table({"doc_id": ["a"], "text": ["one two three four five"]}), path)
    return path


def night(tmp_path: Path, index: Path, pairs: Path, batch_path: Path | None = None) -> int:
    return nightly.main(
        ["--batch", str(batch_path or batch(tmp_path)), "--index", str(index)]
        + ["--output", str(pairs), "--run-date", DATE]
    )


# -- an --index or --output that is not ours ----------------------------------------------------


@pytest.mark.parametrize("job", ["nightly", "build-index", "compact-index"])
def test_a_user_folder_as_index_is_refused_and_untouched(
    job: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = user_folder(tmp_path / "mine")
    before = snapshot(folder)
    if job == "nightly":
        code = night(tmp_path, folder, tmp_path / "pairs")
    elif job == "build-index":
        code = build_index.main(
            ["--run", str(tmp_path / "run"), "--index", str(folder), "--run-date", DATE]
        )
    else:
        code = compact_index.main(["--index", str(folder)])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--index {folder} is a directory that holds no index of ours" in err
    assert snapshot(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["segments", "_versions", "_staging", "run_date=2026-11-30", "thesis.tex"]
    )  # no _lock, no _identity.json
    assert not (tmp_path / "pairs").exists()


def test_a_user_folder_as_pair_table_is_refused_and_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = user_folder(tmp_path / "mine")
    before = snapshot(folder)
    assert night(tmp_path, tmp_path / "index", folder) == 2
    err = capsys.readouterr().err
    assert f"--output {folder} exists and is not the pair table of index" in err
    assert snapshot(folder) == before
    assert not (tmp_path / "index").exists()


def test_a_file_as_index_or_pair_table_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("no backup")
    assert night(tmp_path, thesis, tmp_path / "pairs") == 2
    assert night(tmp_path, tmp_path / "index", thesis) == 2
    assert "not a directory" in capsys.readouterr().err
    assert thesis.read_text() == "no backup"


@pytest.mark.parametrize("state", ["absent", "empty", "only a lock"])
def test_a_new_or_empty_directory_is_fine_to_create_an_index_in(
    state: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    if state != "absent":
        index.mkdir()
    if state == "only a lock":  # an earlier version's first run that failed on its batch
        (index / "_lock").write_text("")
    (tmp_path / "pairs").mkdir()
    monkeypatch.setattr(session, "CHECK_ONLY", True)  # the job's checks, no session
    assert night(tmp_path, index, tmp_path / "pairs") == 0
    assert build_index.main(["--run", str(tmp_path / "run"), "--index", str(index)]
                            + ["--run-date", DATE]) == 0  # fmt: skip


# -- an index committed by hand: a local index needs no session ---------------------------------


def test_a_second_index_on_a_pair_table_is_refused_and_its_staging_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pairs = tmp_path / "pairs"
    first = claimed(tmp_path / "first", pairs)
    committed(first, publish=True)
    committed(first, "bbbbbbbbbbbb", publish=False)  # killed after its commit: staged, unpublished
    assert json.loads((pairs / OWNER).read_text())["index_id"] == first.index_id
    before = snapshot(pairs)
    # a night of another index on the same pair table, new or existing
    second = tmp_path / "second"
    assert night(tmp_path, second, pairs) == 2
    err = capsys.readouterr().err
    assert f"--output {pairs} is the pair table of another index ({first.root})" in err
    claimed(second, tmp_path / "own-pairs")
    assert night(tmp_path, second, pairs) == 2
    assert snapshot(pairs) == before
    # ... and the first index's next run publishes its own staged partition, as committed
    assert first.recover(first.manifest())["pair_partitions_published"] == 1
    assert (pairs / "run_date=2026-12-02" / "part-0.parquet").is_file()


def test_recovery_deletes_only_the_staging_this_index_marked(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs"
    store = claimed(tmp_path / "index", pairs)
    committed(store, publish=True)
    # a killed run of this index (marked), a staging no run of this index made, a user's file
    store.mark_staging("cccccccccccc")
    (pairs / "_staging" / "cccccccccccc" / f"run_date={DATE}").mkdir()
    others = pairs / "_staging" / "dddddddddddd" / "run_date=2026-12-02"
    others.mkdir(parents=True)
    (others / "part-0.parquet").write_text("another index's pairs, from before owner markers")
    (pairs / "_staging" / "notes.txt").write_text("mine")
    kept = {**snapshot(others), **snapshot(pairs / "_staging" / "notes.txt")}
    done = store.recover(store.manifest())
    assert done["leftovers_deleted"] == 1
    assert sorted(p.name for p in (pairs / "_staging").iterdir()) == ["dddddddddddd", "notes.txt"]
    assert {**snapshot(others), **snapshot(pairs / "_staging" / "notes.txt")} == kept


def _edit_manifest(index: Path, edit: dict) -> None:
    manifest = json.loads((index / "_manifest.json").read_text())
    for run in manifest["runs"].values():
        run.update(edit)
    (index / "_manifest.json").write_text(json.dumps(manifest))


def test_an_edited_manifest_never_moves_or_deletes_outside_the_index_and_pair_table(
    tmp_path: Path,
) -> None:
    store = claimed(tmp_path / "index", tmp_path / "pairs")
    committed(store, publish=False)  # a committed run whose partition the next run publishes
    user = user_folder(tmp_path / "user")
    before = snapshot(user)
    # the recorded paths point at a user's directory: the old recovery moved it into the pair
    # table and then deleted its parent
    _edit_manifest(
        tmp_path / "index",
        {
            "staged_pairs": str(user / "segments" / "drafts"),
            "final_pairs": str(tmp_path / "elsewhere" / "run_date=2026-12-01"),
        },
    )
    done = store.recover(store.manifest())
    assert done["pair_partitions_published"] == 1  # its own partition, from this --output
    assert snapshot(user) == before
    assert not (tmp_path / "elsewhere").exists()
    assert (tmp_path / "pairs" / "run_date=2026-12-01" / "part-0.parquet").is_file()


def test_a_copied_index_never_touches_the_original_pair_table(tmp_path: Path) -> None:
    original = claimed(tmp_path / "index", tmp_path / "pairs")
    committed(original, publish=False)
    before = snapshot(tmp_path / "pairs")
    shutil.copytree(tmp_path / "index", tmp_path / "copy")
    (tmp_path / "copy-pairs").mkdir()
    copy = claimed(tmp_path / "copy", tmp_path / "copy-pairs")
    done = copy.recover(copy.manifest())
    assert done == {"pair_partitions_published": 0, "leftovers_deleted": 0}
    assert snapshot(tmp_path / "pairs") == before  # the original's staged partition still there


def test_a_segment_id_that_is_a_path_is_never_deleted(tmp_path: Path) -> None:
    from shingling.spark.index.compaction import Compaction

    store = claimed(tmp_path / "index", tmp_path / "pairs")
    committed(store, publish=True)
    victim = user_folder(tmp_path / "victim")
    before = snapshot(victim)
    manifest = store.manifest()
    assert manifest is not None
    evil = SegmentInfo("../../victim", DATE, 1, 0, 0)
    edited = Manifest(**{**vars(manifest), "segments": (evil,)})
    job = Compaction(store, edited, "eeeeeeeeeeee")
    job.committed = True  # as after a compaction's commit, when it deletes what it replaced
    with pytest.raises(BadInputError, match="not a directory inside its segments"):
        job.delete_replaced()
    with pytest.raises(BadInputError):
        store.segment_dir("..")
    assert snapshot(victim) == before


@pytest.mark.spark
def test_a_failing_night_on_an_edited_manifest_touches_nothing_outside(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    store = claimed(tmp_path / "index", tmp_path / "pairs")
    committed(store, publish=True)
    user = user_folder(tmp_path / "user")
    before = snapshot(user)
    _edit_manifest(
        tmp_path / "index",
        {"staged_pairs": str(user / "thesis.tex"), "final_pairs": str(tmp_path / "moved")},
    )
    # the night fails on its batch (exit 3), after its recovery step
    missing = tmp_path / "no-such-batch.parquet"
    assert night(tmp_path, tmp_path / "index", tmp_path / "pairs", missing) == 3
    assert "input path does not exist" in capsys.readouterr().err
    assert snapshot(user) == before
    assert not (tmp_path / "moved").exists()
    assert (tmp_path / "index" / IDENTITY).is_file()
