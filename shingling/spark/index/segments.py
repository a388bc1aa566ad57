"""How an index segment's files are written (row counts per file, sorted, row groups), and the
settings an index is made with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from shingling import config as config_module
from shingling.index import HASH
from shingling.schema import DOC_ID, SKETCH


@dataclass(frozen=True)
class WriteOptions:
    """How segment files are cut: rows per file, and Parquet row-group size (bytes) that bounds
    what a look-up by hash or id has to read."""

    rows_per_file: int = 2_000_000
    row_group_bytes: int = 1 << 20


def file_count(rows: int, options: WriteOptions) -> int:
    """Files for a table of ``rows`` rows.

    >>> file_count(0, WriteOptions()), file_count(4_000_001, WriteOptions())
    (1, 3)
    """
    return max(1, -(-rows // options.rows_per_file))


def write_sorted(df: DataFrame, path: str, column: str, rows: int, options: WriteOptions) -> None:
    # range-partitioned and sorted: each file covers one range of the column, and each row group
    # a narrower one, so min/max statistics let a reader skip nearly everything
    (
        df.repartitionByRange(file_count(rows, options), column)
        .sortWithinPartitions(column)
        .write.option("parquet.block.size", str(options.row_group_bytes))
        .parquet(path)
    )


def write_texts(texts: DataFrame, path: str, options: WriteOptions) -> None:
    """(doc_id, text) as a segment's texts: zstd-compressed, sorted by id within each file."""
    texts.sortWithinPartitions(DOC_ID).write.option("compression", "zstd").option(
        "parquet.block.size", str(options.row_group_bytes)
    ).parquet(path)


def write_postings(documents: DataFrame, path: str, postings: int, options: WriteOptions) -> None:
    """A segment's postings: (hash, doc_id) of every sketch hash of ``documents``, sorted by hash."""
    hashes = documents.where(F.col(SKETCH).isNotNull()).select(
        F.explode(SKETCH).alias(HASH), DOC_ID
    )
    write_sorted(hashes, path, HASH, postings, options)


def index_settings(cfg: config_module.Config) -> dict[str, Any]:
    """The settings an index and its pair table are made with; every run must use the same."""
    return {
        "width": cfg.sketch.width,
        "k": cfg.sketch.k,
        "unit": cfg.sketch.unit,
        "sample_mod": cfg.sketch.sample_mod,
        "threshold": cfg.pairs.threshold,
        "max_exact_group": cfg.pairs.max_exact_group,
        # a verified index keeps its texts, and its pairs hold exact scores
        "verify": cfg.pairs.verify,
        **({"candidate_margin": cfg.pairs.candidate_margin} if cfg.pairs.verify else {}),
    }


def write_options(cfg: config_module.Config) -> WriteOptions:
    """How the run cuts the segment's files ([index] in the config)."""
    return WriteOptions(
        rows_per_file=cfg.index.rows_per_file, row_group_bytes=cfg.index.row_group_bytes
    )
