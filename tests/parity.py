"""What the parity tests compare: the Spark path's tables, and the same tables from the library.

The library side runs the per-document functions (sketch, estimators) text by text and compares
every pair in pure Python, so it shares no code with shingling.spark.transforms but the schemas.
"""

from __future__ import annotations

import random

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType
from testdata import library_row, licence_words

from shingling import config as config_module
from shingling.hashing import text_checksum
from shingling.pairs import reference_pairs  # noqa: F401 - the reference the parity tests compare with
from shingling.schema import DOC_ID, SKIP_NO_WORDS, SKIP_NULL_ID, SKIP_NULL_TEXT, TEXT
from shingling.spark.schemas import documents_schema
from shingling.spark.stages import Verification, near_duplicate_pairs
from shingling.spark.transforms import sketch_documents

DEFAULTS = config_module.load()
WIDTH, K = DEFAULTS.sketch.width, DEFAULTS.sketch.k


# --- sketches ------------------------------------------------------------------------------------


def expected_documents(
    spark: SparkSession,
    docs: list[tuple],
    id_type: DataType,
    *,
    width: int = WIDTH,
    k: int = K,
    unit: str = "words",
    sample_mod: int = 0,
) -> DataFrame:
    """The documents table the job must write, from the per-document library functions."""
    rows = []
    for doc_id, text in docs:
        row = library_row(None if doc_id is None else text, width, k, unit, sample_mod)
        if doc_id is None:
            reason = SKIP_NULL_ID
        elif text is None:
            reason = SKIP_NULL_TEXT
        else:
            reason = SKIP_NO_WORDS if row["sketch"] is None else None
        checksum = text_checksum(text) if reason is None else None
        rows.append(
            (
                doc_id,
                row["n_words"],
                row["n_shingles"],
                row["sketch"],
                row["text_hash"],
                reason,
                checksum,
            )
        )
    return spark.createDataFrame(rows, documents_schema(id_type))


def spark_documents(
    spark: SparkSession,
    docs: list[tuple],
    id_type: DataType,
    *,
    width: int = WIDTH,
    k: int = K,
    unit: str = "words",
    sample_mod: int = 0,
) -> DataFrame:
    """The documents table from the Spark path (shingling.spark.transforms.sketch_documents)."""
    frame = spark.createDataFrame(docs, f"{DOC_ID} {id_type.simpleString()}, {TEXT} string")
    return frame.transform(sketch_documents, width=width, k=k, unit=unit, sample_mod=sample_mod)


def random_texts(rng: random.Random, n: int) -> list[str | None]:
    """n texts of real words, random code points of every plane (no surrogates) and separators.

    About 6% are null, empty or punctuation only; half the tokens are real words; separators
    include none at all (tokens run together) and non-ASCII spaces and commas.
    """
    vocabulary = licence_words()[:300]

    def code_point() -> str:
        while True:
            cp = rng.randrange(0x110000) if rng.random() < 0.3 else rng.randrange(0x3100)
            if not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)

    texts: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.06:
            texts.append(rng.choice([None, None, "", " ", "...", "—!?\n", "\u3000«»"]))
            continue
        parts = []
        for _ in range(rng.choice([1, 2, 3, 4, 5, rng.randrange(6, 300)])):
            token = rng.choice(vocabulary) if rng.random() < 0.5 else ""
            token = token or "".join(code_point() for _ in range(rng.randrange(1, 8)))
            separator = rng.choice([" ", ", ", ".\n", " - ", "", "\t", "/", "、", "\u00a0"])
            parts.append(token + separator)
        texts.append("".join(parts))
    return texts


# --- the pair table ------------------------------------------------------------------------------


def spark_pairs(
    documents: DataFrame,
    *,
    threshold: float,
    max_exact_group: int,
    containment_threshold: float | None = None,
    k: int = K,
    texts: DataFrame | None = None,
    margin: float = DEFAULTS.pairs.candidate_margin,
    width: int = WIDTH,
    unit: str = "words",
) -> DataFrame:
    """The pair table from the Spark path (shingling.spark.stages.near_duplicate_pairs); verified against
    ``texts`` (doc_id, text) when given."""
    verify = None if texts is None else Verification(texts, width, unit, margin)
    return documents.transform(
        near_duplicate_pairs,
        threshold=threshold,
        k=k,
        max_exact_group=max_exact_group,
        max_posting=DEFAULTS.pairs.max_posting,
        containment_threshold=containment_threshold,
        verify=verify,
    )
