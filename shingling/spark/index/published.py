"""The tables an index's runs publish partitions into (the pair table, the decisions table):
staged aside, published after the commit, owned by one index."""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from shingling.errors import BadInputError
from shingling.spark.index.errors import ForeignPathError

if TYPE_CHECKING:
    from shingling.spark.index.store import IndexStore

log = logging.getLogger("shingling")

STAGING = "_staging"
# in a pair table, and in each run's staging directory in it: the index it belongs to
OWNER = "_owner.json"
PAIRS_FORMAT = "shingling-pairs"
DECISIONS_FORMAT = "shingling-decisions"
#: The tables of a decisions table (--decisions): each a partition per night, like the pairs.
KEPT_TABLE = "kept"
REMOVED_TABLE = "removed"
RUN_ID = re.compile(r"^[0-9a-f]{12}$")


class PublishedTable:
    """A table the index's runs publish a partition into, ``run_date=<date>/``, owned by one index:
    the pair table (``--output``) and a nightly's decisions (``--decisions``: ``kept/`` and
    ``removed/``, each partitioned by run date).

    A run stages its partitions under ``<table>/_staging/<run id>/`` (marked as this index's),
    the commit makes them due, and :meth:`publish` renames them into place; a killed run's
    committed partitions are published by the next run's recovery, its uncommitted ones deleted.
    Nothing outside the table is ever moved or deleted, whatever a manifest says.
    """

    def __init__(
        self,
        store: IndexStore,
        path: str,
        *,
        role: str,
        noun: str,
        marker: str,
        parts: tuple[str, ...] = ("",),
    ) -> None:
        self.store, self.path, self.role, self.noun = store, path, role, noun
        self.marker, self.parts = marker, parts

    def staging_dir(self, run_id: str) -> str:
        """A run's staging directory in this table."""
        assert RUN_ID.match(run_id), run_id
        return f"{self.path}/{STAGING}/{run_id}"

    @staticmethod
    def _partition(run_date: str, part: str) -> str:
        return f"{part}/run_date={run_date}" if part else f"run_date={run_date}"

    def staged(self, run_id: str, run_date: str, part: str = "") -> str:
        """Where a run stages a partition: in this run's table, whatever the manifest recorded."""
        return f"{self.staging_dir(run_id)}/{self._partition(run_date, part)}"

    def final(self, run_date: str, part: str = "") -> str:
        return f"{self.path}/{self._partition(run_date, part)}"

    def owner(self) -> dict[str, Any] | None:
        """The table's owner marker, None if it has none."""
        found = self.store._read_json(f"{self.path}/{OWNER}")
        if found is not None and found.get("format") != self.marker:
            raise ForeignPathError(
                f"{self.role} {self.path}: its {OWNER} is not a shingling {self.noun}'s; nothing"
                " was written or deleted"
            )
        return found

    def check_owned(self, index_id: str | None, runs: set[str]) -> None:
        """Refuse a table that is not this index's (:meth:`IndexStore.check_owned`)."""
        files = self.store.files
        if files.exists(self.path) and not self.store._is_directory(self.path):
            raise ForeignPathError(
                f"{self.role} {self.path} exists and is not a directory; nothing was written"
            )
        owner = self.owner()
        if owner is not None:
            if index_id is None or owner.get("index_id") != index_id:
                raise ForeignPathError(
                    f"{self.role} {self.path} is the {self.noun} of another index"
                    f" ({owner.get('index')}): a {self.noun} belongs to one index, and this one is"
                    f" {self.store.root}; nothing was written or deleted; choose another"
                    f" {self.role}"
                )
            return
        # a pair table made before owner markers holds only partitions of this index's runs
        others = [
            n
            for n in files.list_names(self.path)
            if n != STAGING
            and not (self.parts == ("",) and n.startswith("run_date=") and n[9:] in runs)
        ]
        if others:
            raise ForeignPathError(
                f"{self.role} {self.path} exists and is not the {self.noun} of index"
                f" {self.store.root} (no {OWNER}, and it holds {', '.join(others[:4])}"
                f"{', ...' if len(others) > 4 else ''}): it is never written into nor cleaned;"
                " choose a new or empty directory"
            )

    def claim(self, index_id: str) -> None:
        """Mark the table as this index's (an exclusive create: of two runs racing, one wins)."""
        marker = json.dumps({"format": self.marker, "index_id": index_id, "index": self.store.root})
        if not self.store.files.create_exclusive(f"{self.path}/{OWNER}", marker + "\n"):
            owner = self.owner()
            if owner is None or owner.get("index_id") != index_id:
                raise ForeignPathError(
                    f"{self.role} {self.path} became the {self.noun} of another index"
                    f" ({owner.get('index') if owner else '?'}) during this run; nothing committed"
                )

    def mark_staging(self, index_id: str | None, run_id: str) -> None:
        """Mark a run's staging directory as this index's, before anything is staged in it:
        recovery deletes only staging so marked (or a committed run's, once published)."""
        marker = json.dumps({"format": self.marker, "index_id": index_id, "run_id": run_id})
        self.store.files.write_text(f"{self.staging_dir(run_id)}/{OWNER}", marker + "\n")

    def owns_staging(self, index_id: str | None, name: str) -> bool:
        """Whether ``_staging/<name>`` is a staging directory this index marked."""
        if index_id is None or not RUN_ID.match(name):
            return False
        path = self.staging_dir(name)
        if not self.store._inside(path, self.path):
            return False
        try:
            owner = self.store._read_json(f"{path}/{OWNER}")
        except BadInputError:
            return False
        return owner is not None and owner.get("index_id") == index_id

    def delete_staging(self, run_id: str) -> bool:
        """Delete a run's staging directory once it holds no partition; True if done."""
        files = self.store.files
        path = self.staging_dir(run_id)
        if not files.exists(path):
            return True
        left = [
            n
            for n in files.list_names(path)
            if n != OWNER and not (n in self.parts and not files.list_names(f"{path}/{n}"))
        ]
        if left or not self.store._inside(path, self.path):
            return False
        files.delete(path)
        return True

    def publish(self, run_id: str, run_date: str) -> int:
        """Move a run's staged partitions into place (those not yet there); how many moved."""
        moved = 0
        for part in self.parts:
            staged, final = self.staged(run_id, run_date, part), self.final(run_date, part)
            if self.store.files.is_dir(staged) and not self.store.files.exists(final):
                self.store.files.rename_dir(staged, final)
                moved += 1
        self.delete_staging(run_id)
        return moved

    def unpublish(self, run_id: str, run_date: str) -> bool:
        """Move a run's published partitions back to its staging; whether any was there."""
        moved = False
        self.mark_staging(self.store.index_id, run_id)  # so that recovery may delete it once undone
        for part in self.parts:
            staged, final = self.staged(run_id, run_date, part), self.final(run_date, part)
            if self.store.files.exists(final):
                self.store.files.rename_dir(final, staged)
                moved = True
        return moved

    def recover(self, index_id: str | None) -> int:
        """Delete the staging directories this index marked (after committed runs' partitions were
        published); returns how many."""
        deleted = 0
        for name in self.store.files.list_names(f"{self.path}/{STAGING}"):
            if self.owns_staging(index_id, name):
                self.store.files.delete(self.staging_dir(name))
                deleted += 1
            else:
                log.warning(
                    "left %s/%s/%s in place: no run of this index staged it",
                    self.path,
                    STAGING,
                    name,
                )
        return deleted
