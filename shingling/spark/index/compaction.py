"""An index's live rows rewritten as one segment, committed like a night."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from shingling.index import (
    DECISIONS,
    DOCUMENTS,
    POSTINGS,
    SEGMENT,
    SUPERSEDED,
    TEXTS,
    Manifest,
    SegmentInfo,
    segment_path,
)
from shingling.schema import DOC_ID, SKETCH, TEXT
from shingling.spark.index.errors import (
    IndexCountsError,
)
from shingling.spark.index.segments import (
    WriteOptions,
    file_count,
    write_postings,
    write_sorted,
    write_texts,
)

if TYPE_CHECKING:
    from shingling.spark.index.store import IndexStore


class Compaction:
    """One index's live rows rewritten as one segment, committed like a night.

    The live rows of every segment (those no later segment supersedes) are written aside as a new
    segment (documents sorted by id, postings sorted by hash, texts when the index keeps them, no
    superseded rows); the commit replaces the manifest's segment list by that one segment, with
    the same live documents and postings (checked before the commit) and the same runs. The
    replaced segments are deleted after the commit; if the process dies first, the next run's
    recovery deletes them (they are no longer named by the manifest).
    """

    def __init__(self, store: IndexStore, base: Manifest, run_id: str) -> None:
        self.store = store
        self.base = base
        self.run_id = run_id
        self.segment_id = f"{base.version + 1:06d}-compact-{run_id}"
        self.segment = segment_path(store.root, self.segment_id)
        self.info: SegmentInfo | None = None
        self.committed = False

    def write(self, options: WriteOptions) -> SegmentInfo:
        """Write the new segment aside (nothing visible changes); returns what it holds.

        Raises:
            IndexCountsError: the rows written differ from the manifest's live counts.
            MissingTextsError: the index keeps texts, but a segment has none.
        """
        store, base = self.store, self.base
        spark = store.spark
        live = store.live_documents(base)
        assert live is not None
        documents_path = f"{self.segment}/{DOCUMENTS}"
        write_sorted(
            live.withColumn(SEGMENT, F.lit(self.segment_id)),
            documents_path,
            DOC_ID,
            base.live_documents,
            options,
        )
        written = spark.read.parquet(documents_path)
        row = written.agg(
            F.count(F.lit(1)).alias("documents"),
            F.sum(F.coalesce(F.size(SKETCH), F.lit(0))).alias("postings"),
        ).first()
        assert row is not None
        documents, postings = int(row["documents"]), int(row["postings"] or 0)
        if (documents, postings) != (base.live_documents, base.live_postings):
            raise IndexCountsError(
                f"index {store.root} version {base.version}: its segments hold {documents} live"
                f" documents and {postings} postings, its manifest says {base.live_documents} and"
                f" {base.live_postings}; nothing was compacted"
            )
        write_postings(written, f"{self.segment}/{POSTINGS}", postings, options)
        spark.createDataFrame([], written.select(DOC_ID, SEGMENT).schema).coalesce(1).write.parquet(
            f"{self.segment}/{SUPERSEDED}"
        )
        if base.settings.get("verify"):
            texts = store.live_texts(base)
            assert texts is not None
            kept = texts.join(live.select(DOC_ID, SEGMENT), [DOC_ID, SEGMENT], "left_semi")
            write_texts(
                kept.select(DOC_ID, TEXT).repartitionByRange(
                    file_count(documents, options), DOC_ID
                ),
                f"{self.segment}/{TEXTS}",
                options,
            )
        decided = store.live_decisions(base)
        if decided is not None:  # the nights' decisions of the live rows, kept with them
            decided.coalesce(1).sortWithinPartitions(DOC_ID).write.parquet(
                f"{self.segment}/{DECISIONS}"
            )
        run_date = base.last_run_date or (base.segments[-1].run_date if base.segments else "")
        self.info = SegmentInfo(self.segment_id, run_date, documents, postings, 0)
        return self.info

    def commit(self) -> Manifest:
        """Protocol steps 4 and 5: the manifest now names the one new segment."""
        assert self.info is not None
        new = self.store.commit_next(self.base, replace(self.base, segments=(self.info,)))
        self.committed = True
        return new

    def abort(self) -> None:
        """Delete the new segment, unless the compaction committed."""
        if not self.committed:
            self.store.files.delete(self.segment)

    def delete_replaced(self) -> int:
        """After the commit: delete the segments the compacted one replaced; returns how many."""
        assert self.committed
        for s in self.base.segments:
            self.store.files.delete(self.store.segment_dir(s.id))
        return len(self.base.segments)
