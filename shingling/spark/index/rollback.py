"""The index's last night taken back (``shingling run undo-night``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from shingling.errors import BadInputError, ConfigError
from shingling.index import (
    Manifest,
    version_path,
)
from shingling.spark.index.errors import (
    UndoRefusedError,
)
from shingling.spark.index.published import (
    RUN_ID,
    PublishedTable,
)

if TYPE_CHECKING:
    from shingling.spark.index.store import IndexStore

log = logging.getLogger("shingling")


class Rollback:
    """The index's last night taken back: the index and the pair table as they were before it,
    with the commit protocol of a night (``jobs/undo_night.py``).

    The version before the night is its history copy, ``_versions/<version - 1>.json``, checked
    to be the night's base (the same segments and runs but the night's): a night followed by a
    compaction, or any run but the last, is refused. The steps, under the lock and after recovery:

    1. **Unpublish**: the night's pair partition is moved back to its staging directory, the path
       a committed night's partition is published from. Killed here, the index still holds the
       night, and the next run's recovery publishes the partition again: nothing changed.
    2. **Commit**: the version before the night is committed again, as a new version (version
       numbers only grow, so every history file stays), by the manifest swap of a night.
    3. **Delete** the night's segment and staged partition. Killed before, the next run's recovery
       deletes them (the manifest no longer names them).
    """

    def __init__(self, store: IndexStore, base: Manifest, run_date: str, run_id: str) -> None:
        self.store = store
        self.base = base
        self.run_date = run_date
        self.run_id = run_id
        self.previous = self._previous()
        run = base.runs[run_date]
        self.night_run_id = str(run.get("run_id", ""))
        if not RUN_ID.match(self.night_run_id):
            raise BadInputError(
                f"index {store.root}: run {run_date} has no run id its manifest can be trusted"
                f" with ({self.night_run_id!r}); nothing was changed"
            )
        self.segment = store.segment_dir(str(run["segment"]))
        if store.pairs is None and (run.get("final_pairs") or run.get("staged_pairs")):
            raise ConfigError(
                f"run {run_date} wrote a pair partition ({run.get('final_pairs')}): pass its pair"
                " table as --output, so that it is taken back with the index; nothing was changed"
            )
        if store.decision_table is None and run.get("decisions"):
            raise ConfigError(
                f"run {run_date} wrote its kept and removed documents to {run.get('decisions')}:"
                " pass that table as --decisions, so that they are taken back with the index;"
                " nothing was changed"
            )
        self.moved: list[PublishedTable] = []
        self.committed = False

    def _previous(self) -> Manifest:
        """The committed version before the night, checked to be the night's base."""
        store, base, night_date = self.store, self.base, self.run_date
        last = base.last_run_date
        if night_date not in base.runs:
            raise UndoRefusedError(
                f"index {store.root} holds no run {night_date} (its last run is {last});"
                " nothing to undo"
            )
        if night_date != last:
            raise UndoRefusedError(
                f"run {night_date} is not the last of index {store.root} ({last}): only the last"
                f" night can be undone; undo {last} first if it must go too"
            )
        night = base.runs[night_date].get("segment")
        if base.version == 1:
            previous = Manifest.empty(base.id_type, base.settings)
        else:
            text = store.files.read_text(version_path(store.root, base.version - 1))
            if text is None:
                raise BadInputError(
                    f"index {store.root}: {version_path(store.root, base.version - 1)}, the version"
                    f" before the night, is missing; nothing was changed"
                )
            try:
                previous = Manifest.from_json(text)
            except (ValueError, KeyError, TypeError) as e:
                raise BadInputError(
                    f"cannot read {version_path(store.root, base.version - 1)} ({e!r}); nothing"
                    " was changed"
                ) from e
        others = {d: r for d, r in base.runs.items() if d != night_date}
        if (
            not base.segments
            or base.segments[-1].id != night
            or previous.segments != base.segments[:-1]
            or previous.runs != others
            or previous.version != base.version - 1
        ):
            raise UndoRefusedError(
                f"version {base.version} of index {store.root} is not the night of {night_date}"
                " alone"
                " (the index was compacted since, or rebuilt): that night cannot be undone, since"
                " its documents are now part of other segments; build a new index, or keep it"
            )
        return previous

    def unpublish(self) -> None:
        """Step 1: move the night's pair partition back to the path it is published from."""
        for table in self.store.tables:
            if table.unpublish(self.night_run_id, self.run_date):
                self.moved.append(table)
            elif not self.store.files.exists(table.staging_dir(self.night_run_id)):
                log.warning(
                    "%s holds no partition run_date=%s: only the index is taken back",
                    table.path,
                    self.run_date,
                )

    def commit(self) -> Manifest:
        """Step 2: the version before the night, committed again as the next version."""
        new = self.store.commit_next(self.base, self.previous)
        self.committed = True
        return new

    def abort(self) -> None:
        """Before the commit: put the pair partition back in the pair table."""
        if self.committed:
            return
        for table in self.moved:
            table.publish(self.night_run_id, self.run_date)
        self.store._delete_staging(self.night_run_id)

    def delete_night(self) -> None:
        """Step 3, after the commit: the night's segment and staged pair partition."""
        assert self.committed
        self.store.files.delete(self.segment)
        for table in self.store.tables:
            self.store.files.delete(table.staging_dir(self.night_run_id))
