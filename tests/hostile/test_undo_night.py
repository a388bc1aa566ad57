"""Issue 34, point 3: a night committed by mistake (a date typed far ahead) can be undone.

``jobs/undo_night.py`` takes the index and the pair table back one commit with the protocol of a
night. Tested on real nights (the session fixture, once), then on nights committed by hand through
the store (a local index needs no session): refusals, and a child process killed at each step of
the undo, after which the next run's recovery leaves either the night or its undoing, whole.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hostile_helpers import claimed, committed, snapshot

from shingling import config as config_module
from shingling.index import Manifest, SegmentInfo
from shingling.spark.hooks import TEST_HOOK_ENV
from shingling.spark.index.errors import UndoRefusedError
from shingling.spark.jobs import nightly, undo_night
from shingling.spark.storage import Files

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.parquet"
TYPO = "2027-12-02"  # meant 2026-12-02


def files(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its digest, but the lock (each run writes its id there)."""
    return {path: digest for path, digest in snapshot(root).items() if not path.endswith("/_lock")}


def state(root: Path) -> dict:
    """What a reader and the next night see: the manifest but its version and time, the segment
    directories, the pair table's rows by partition, and what is left in its staging."""
    manifest = json.loads((root / "index" / "_manifest.json").read_text())
    for volatile in ("version", "created_at"):
        manifest.pop(volatile)
    pairs = root / "pairs"
    partitions = {
        p.name: sorted(map(str, pq.read_table(p).to_pylist()))
        for p in sorted(pairs.glob("run_date=*"))
    }
    staging = sorted(p.name for p in (pairs / "_staging").glob("*")) if pairs.exists() else []
    return {
        "manifest": manifest,
        "segments": sorted(p.name for p in (root / "index" / "segments").glob("*")),
        "pairs": partitions,
        "staging": staging,
    }


# -- real nights ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nights(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of two real nights, the second under a date typed a year ahead; ``after-1`` keeps
    the state after the first night."""
    root = tmp_path_factory.mktemp("undo")
    corpus = pq.read_table(CORPUS, columns=["doc_id", "text"])
    cfg = config_module.load(None, [])
    for i, date in enumerate(["2026-12-01", TYPO]):
        batch = root / f"b{i}.parquet"
        pq.write_table(corpus.slice(40 * i, 40), batch)
        nightly.run(
            spark, cfg, batch_path=str(batch), index_path=str(root / "index"),
            pairs_path=str(root / "pairs"), run_date=date,
        )  # fmt: skip
        if i == 0:
            shutil.copytree(root / "index", root / "after-1" / "index")
            shutil.copytree(root / "pairs", root / "after-1" / "pairs")
    return root


def copy_of(nights: Path, tmp_path: Path) -> Path:
    for name in ("index", "pairs"):
        shutil.copytree(nights / name, tmp_path / name)
    for batch in nights.glob("b*.parquet"):
        shutil.copy(batch, tmp_path / batch.name)
    return tmp_path


@pytest.mark.spark
@pytest.mark.history
def test_undoing_a_night_dated_a_year_ahead_lets_the_real_date_run(
    spark, nights: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    root = copy_of(nights, tmp_path)
    before = snapshot(root / "b1.parquet")
    args = ["--index", str(root / "index"), "--output", str(root / "pairs")]
    # the typo blocks the real date
    with pytest.raises(config_module.ConfigError, match="before the index's last run"):
        nightly.run(
            spark, config_module.load(None, []), batch_path=str(root / "b1.parquet"),
            index_path=str(root / "index"), pairs_path=str(root / "pairs"), run_date="2026-12-02",
        )  # fmt: skip
    assert undo_night.main([*args, "--run-date", "2026-12-01"]) == 2  # not the last night
    assert "only the last night can be undone; undo 2027-12-02 first" in capsys.readouterr().err
    assert undo_night.main([*args, "--run-date", TYPO]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "undone" and summary["index_after"]["last_run_date"] == "2026-12-01"
    assert state(root) == state(nights / "after-1")
    assert sorted(p.name for p in (root / "index" / "_versions").iterdir()) == [
        "00000001.json", "00000002.json", "00000003.json",
    ]  # fmt: skip
    # the real date now runs, against the index of the first night, and its pairs are the ones
    # it would have found without the typo
    nightly.run(
        spark, config_module.load(None, []), batch_path=str(root / "b1.parquet"),
        index_path=str(root / "index"), pairs_path=str(root / "pairs"), run_date="2026-12-02",
    )  # fmt: skip
    redone = pq.read_table(root / "pairs" / "run_date=2026-12-02").to_pylist()
    typo = pq.read_table(nights / "pairs" / f"run_date={TYPO}").to_pylist()
    assert sorted(map(str, redone)) == sorted(map(str, typo))
    assert snapshot(root / "b1.parquet") == before  # the batch, the user's, untouched
    table = ds.dataset(root / "pairs", format="parquet", partitioning="hive").to_table()
    assert sorted(set(table["run_date"].to_pylist())) == ["2026-12-01", "2026-12-02"]


# -- nights committed by hand -----------------------------------------------------------------------


def two_nights(tmp_path: Path) -> Path:
    """An index of two nights (2026-12-01, 2026-12-02), both published; ``after-1`` is the state
    after the first."""
    store = claimed(tmp_path / "index", tmp_path / "pairs")
    committed(store, publish=True)
    shutil.copytree(tmp_path / "index", tmp_path / "after-1" / "index")
    shutil.copytree(tmp_path / "pairs", tmp_path / "after-1" / "pairs")
    committed(store, "bbbbbbbbbbbb", publish=True)
    return tmp_path


def test_only_the_last_night_of_an_uncompacted_index_is_undone(tmp_path: Path) -> None:
    root = two_nights(tmp_path)
    before = files(root)
    kwargs = {"index_path": str(root / "index"), "pairs_path": str(root / "pairs")}
    for date, message in [
        ("2026-12-01", "only the last night can be undone"),
        ("2026-12-05", "holds no run 2026-12-05"),
    ]:
        with pytest.raises(UndoRefusedError, match=message) as refused:
            undo_night.undo(None, run_date=date, **kwargs)
        assert refused.value.exit_code == 2
    with pytest.raises(config_module.ConfigError, match="pass its pair table as --output"):
        undo_night.undo(
            None, index_path=str(root / "index"), pairs_path=None, run_date="2026-12-02"
        )
    assert files(root) == before
    # a compaction since the night merged its segment: it cannot be taken back alone
    store = claimed(root / "index", root / "pairs")
    base = store.manifest()
    assert base is not None
    merged = SegmentInfo("000003-compact-cccccccccccc", "2026-12-02", 2, 0, 0)
    (root / "index" / "segments" / merged.id).mkdir()
    compacted = Manifest(**{**vars(base), "version": 3, "segments": (merged,)})
    store.swap_manifest(compacted)
    before = files(root)
    with pytest.raises(UndoRefusedError, match="compacted since"):
        undo_night.undo(None, run_date="2026-12-02", **kwargs)
    assert files(root) == before


def test_the_first_commit_is_undone_to_an_empty_index_a_night_continues(tmp_path: Path) -> None:
    store = claimed(tmp_path / "index", tmp_path / "pairs")
    committed(store, publish=True)
    summary = undo_night.undo(
        None, index_path=str(tmp_path / "index"), pairs_path=str(tmp_path / "pairs"),
        run_date="2026-12-01",
    )  # fmt: skip
    assert summary["index_after"] == {
        "version_before": 1, "version_after": 2, "documents_before": 1, "documents_after": 0,
        "last_run_date": None,
    }  # fmt: skip
    manifest = store.manifest()
    assert manifest is not None and not manifest.segments and not manifest.runs
    assert list((tmp_path / "index" / "segments").iterdir()) == []
    assert not list((tmp_path / "pairs").glob("run_date=*"))
    committed(store, "bbbbbbbbbbbb", publish=True)  # the next night commits version 3
    assert store.manifest().version == 3  # type: ignore[union-attr]


def test_a_user_folder_is_refused_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "mine"
    (folder / "segments").mkdir(parents=True)
    (folder / "segments" / "notes.txt").write_text("mine")
    before = snapshot(folder)
    args = ["--index", str(folder), "--output", str(tmp_path / "pairs"), "--run-date", TYPO]
    assert undo_night.main(args) == 2
    assert "holds no index of ours" in capsys.readouterr().err
    assert snapshot(folder) == before and sorted(os.listdir(folder)) == ["segments"]


UNDO = """
import sys
from shingling.spark.jobs.undo_night import undo
undo(None, index_path=sys.argv[1], pairs_path=sys.argv[2], run_date="2026-12-02")
"""


@pytest.mark.parametrize(
    ("point", "undone"),
    [
        (None, True),
        ("unpublished", False),  # the partition moved back to staging, nothing committed
        ("versioned", False),  # the version file written, the manifest not swapped
        ("committed", True),  # the manifest swapped, the night's files not yet deleted
    ],
)
def test_a_kill_at_each_step_of_an_undo_leaves_the_night_or_its_undoing(
    tmp_path: Path, point: str | None, undone: bool
) -> None:
    root = two_nights(tmp_path)
    night = state(root)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop(TEST_HOOK_ENV, None)
    if point:
        env[TEST_HOOK_ENV] = f"{point}=exit"
    done = subprocess.run(
        [sys.executable, "-c", UNDO, str(root / "index"), str(root / "pairs")],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == (97 if point else 0), done.stderr
    # the next run on the index recovers first, under the lock
    store = claimed(root / "index", root / "pairs")
    store.recover(store.manifest())
    assert state(root) == (state(root / "after-1") if undone else night)
    assert Files(None, True).list_names(str(root / "pairs" / "_staging")) == []
    if not undone:  # and the undo, run again, completes
        undo_night.undo(
            None, index_path=str(root / "index"), pairs_path=str(root / "pairs"),
            run_date="2026-12-02",
        )  # fmt: skip
        assert state(root) == state(root / "after-1")


def test_a_failure_before_the_commit_puts_the_partition_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = two_nights(tmp_path)
    night = state(root)
    before = snapshot(root / "pairs")

    def broken(self, new) -> None:  # noqa: ANN001 - the store's signature
        raise OSError("the disk went away")

    monkeypatch.setattr("shingling.spark.index.store.IndexStore.swap_manifest", broken)
    with pytest.raises(OSError, match="the disk went away"):
        undo_night.undo(
            None, index_path=str(root / "index"), pairs_path=str(root / "pairs"),
            run_date="2026-12-02",
        )  # fmt: skip
    assert state(root) == night
    assert snapshot(root / "pairs") == before


def test_pairs_table_of_one_row_per_night(tmp_path: Path) -> None:
    # the helper's nights are what the kill test compares: one partition per night, one row each
    root = two_nights(tmp_path)
    assert state(root)["pairs"] == {
        "run_date=2026-12-01": [str({"doc_a": "aaaaaaaaaaaa"})],
        "run_date=2026-12-02": [str({"doc_a": "bbbbbbbbbbbb"})],
    }
