"""A night's additions to the index: a segment and its partitions, written aside and committed
at once (protocol steps 3 to 6 of :mod:`shingling.spark.index`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from shingling.index import (
    ADDED,
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
from shingling.schema import DOC_ID, SKETCH
from shingling.spark.index.errors import (
    CommittedError,
)
from shingling.spark.index.published import (
    KEPT_TABLE,
    REMOVED_TABLE,
)
from shingling.spark.index.segments import (
    WriteOptions,
    write_postings,
    write_texts,
)

if TYPE_CHECKING:
    from shingling.spark.index.store import IndexStore


class Transaction:
    """One run's additions: a segment and a pair partition, written aside, committed at once."""

    def __init__(self, store: IndexStore, base: Manifest, run_date: str, run_id: str) -> None:
        self.store = store
        self.base = base
        self.run_date = run_date
        self.run_id = run_id
        self.segment_id = f"{base.version + 1:06d}-{run_id}"
        self.segment = segment_path(store.root, self.segment_id)
        self.documents_path = f"{self.segment}/{DOCUMENTS}"
        self.texts_path = f"{self.segment}/{TEXTS}"
        self.decisions_path = f"{self.segment}/{DECISIONS}"
        self.staged_pairs = store.staged_pairs(run_id, run_date) if store.pairs else None
        self.final_pairs = store.final_pairs(run_date) if store.pairs else None
        self.info: SegmentInfo | None = None
        self.committed = False

    def write_documents(self, documents: DataFrame, options: WriteOptions) -> DataFrame:
        """Write the run's documents table as the segment's documents; returns it read back.

        ``documents`` must come range-partitioned and sorted by id (the caller orders the corpus
        before sketching, so that the sketching is not run twice to sample the range bounds).
        """
        tagged = documents.withColumn(ADDED, F.lit(self.run_date)).withColumn(
            SEGMENT, F.lit(self.segment_id)
        )
        tagged.write.option("parquet.block.size", str(options.row_group_bytes)).parquet(
            self.documents_path
        )
        return self.store.spark.read.parquet(self.documents_path)

    def write_texts(self, texts: DataFrame, options: WriteOptions) -> None:
        """Write the run's (doc_id, text) as the segment's texts, zstd-compressed, sorted by id."""
        write_texts(texts, self.texts_path, options)

    def write_decisions(self, decisions: DataFrame) -> None:
        """Write the night's dedup decision of each of its documents into the segment."""
        decisions.coalesce(1).sortWithinPartitions(DOC_ID).write.parquet(self.decisions_path)

    def stage_pairs(self, pairs: DataFrame) -> None:
        """Write the run's pair partition aside, in a staging directory marked as this index's."""
        assert self.staged_pairs is not None
        self.store.mark_staging(self.run_id)
        pairs.write.parquet(self.staged_pairs)

    def stage_decisions(self, decisions: DataFrame) -> None:
        """Write the night's kept and removed documents aside in the decisions table (--decisions),
        from its decisions (doc_id, kept_id, relation, jaccard, containment, exact_duplicate)."""
        table = self.store.decision_table
        if table is None:
            return
        table.mark_staging(self.store.index_id, self.run_id)
        kept = decisions.where(F.col("relation") == F.lit("kept")).select(DOC_ID)
        removed = decisions.where(F.col("relation") != F.lit("kept"))
        for part, rows in ((KEPT_TABLE, kept), (REMOVED_TABLE, removed)):
            rows.coalesce(1).sortWithinPartitions(DOC_ID).write.parquet(
                table.staged(self.run_id, self.run_date, part)
            )

    def write_index(
        self, live: DataFrame | None, documents: int, options: WriteOptions
    ) -> SegmentInfo:
        """Write the segment's postings and the rows it replaces (``live``: the index before)."""
        spark = self.store.spark
        written = spark.read.parquet(self.documents_path)
        n_postings = int(written.agg(F.sum(F.coalesce(F.size(SKETCH), F.lit(0)))).first()[0] or 0)  # type: ignore[index]
        write_postings(written, f"{self.segment}/{POSTINGS}", n_postings, options)
        ids = written.select(DOC_ID)
        if live is not None:
            superseded = live.select(DOC_ID, SEGMENT).join(F.broadcast(ids), DOC_ID, "left_semi")
        else:
            superseded = spark.createDataFrame([], written.select(DOC_ID, SEGMENT).schema)
        superseded.coalesce(1).write.parquet(f"{self.segment}/{SUPERSEDED}")
        n_superseded = spark.read.parquet(f"{self.segment}/{SUPERSEDED}").count()
        self.info = SegmentInfo(self.segment_id, self.run_date, documents, n_postings, n_superseded)
        return self.info

    def replaced_postings(self) -> int:
        """Postings of the rows this segment replaces (to keep the manifest's live count)."""
        spark = self.store.spark
        assert self.info is not None
        if not self.info.superseded:
            return 0
        dead = spark.read.parquet(f"{self.segment}/{SUPERSEDED}")
        docs = self.store.live_documents(self.base)
        assert docs is not None
        row = (
            docs.join(dead, [DOC_ID, SEGMENT], "left_semi")
            .agg(F.sum(F.coalesce(F.size(SKETCH), F.lit(0))))
            .first()
        )
        return int(row[0] or 0) if row else 0

    def commit(self, settings: dict[str, Any], id_type: str, run: dict[str, Any]) -> Manifest:
        """Protocol steps 4 and 5: check the base is still current, then swap the manifest."""
        assert self.info is not None
        self.store.check_current(self.base)  # before the count below: a moved index fails fast
        live_docs = self.base.live_documents - self.info.superseded + self.info.documents
        live_postings = self.base.live_postings - self.replaced_postings() + self.info.postings
        entry = {"segment": self.segment_id, "run_id": self.run_id, **run}
        if self.staged_pairs:
            entry.update(staged_pairs=self.staged_pairs, final_pairs=self.final_pairs)
        table = self.store.decision_table
        if table is not None and self.store.files.exists(table.staging_dir(self.run_id)):
            entry.update(decisions=table.path)
        template = replace(
            self.base,
            id_type=id_type,
            settings=settings,
            segments=(*self.base.segments, self.info),
            runs={**self.base.runs, self.run_date: entry},
            live_documents=live_docs,
            live_postings=live_postings,
        )
        new = self.store.commit_next(self.base, template)
        self.committed = True
        return new

    def abort(self) -> None:
        """Delete what this run wrote aside, unless it committed (then the next run publishes)."""
        if self.committed:
            return
        self.store.files.delete(self.segment)
        for table in self.store.tables:
            self.store.files.delete(table.staging_dir(self.run_id))

    def publish(self) -> None:
        """Step 6: move the staged partitions into the pair table (and the decisions table).

        A failure here comes after the commit point: it raises :class:`CommittedError`, which says
        the run is committed and how to finish (the next run on this index publishes the partition).
        """
        for table in self.store.tables:
            try:
                table.publish(self.run_id, self.run_date)
            except Exception as e:
                raise CommittedError(
                    f"run {self.run_date} IS COMMITTED as version {self.base.version + 1} of index"
                    f" {self.store.root}, but its {table.noun} partition was not published ({e}):"
                    f" it is staged at {table.staged(self.run_id, self.run_date, table.parts[0])};"
                    f" the next run on this index moves it to"
                    f" {table.final(self.run_date, table.parts[0])}, or move it there yourself"
                ) from e
