"""What the parity tests compare: the Spark path's tables, and the same tables from the library.

The library side runs the per-document functions (sketch, estimators) text by text and compares
every pair in pure Python, so it shares no code with jobs.transforms but the schemas.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DataType
from testdata import library_row, licence_words

from jobs import config as config_module
from jobs.schemas import (
    A_IN_B,
    B_IN_A,
    DOC_ID,
    NEAR_DUPLICATE,
    SKIP_NO_WORDS,
    SKIP_NULL_ID,
    SKIP_NULL_TEXT,
    TEXT,
    documents_schema,
)
from jobs.transforms import Verification, near_duplicate_pairs, sketch_documents
from shingling.estimators import containment, jaccard, matches
from shingling.exact import overlap
from shingling.sketch import Sketch

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
        rows.append(
            (doc_id, row["n_words"], row["n_shingles"], row["sketch"], row["text_hash"], reason)
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
    """The documents table from the Spark path (jobs.transforms.sketch_documents)."""
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


def reference_pairs(
    rows: dict,
    *,
    threshold: float,
    max_exact_group: int,
    containment_threshold: float | None = None,
    width: int = WIDTH,
    k: int = K,
    unit: str = "words",
    sample_mod: int = 0,
    texts: dict | None = None,
    margin: float = 0.0,
) -> list[tuple]:
    """The pair table, in pairs_schema order, from library sketches: every pair compared.

    With ``texts`` (doc_id -> text), the verified table: a pair of representatives is a candidate
    when its estimates reach the thresholds less ``margin`` (at least 0.05), and is then decided
    on its exact scores from the two texts (:func:`shingling.exact.overlap`), which fill
    ``jaccard`` and the containments; ``jaccard_estimate`` is the estimate either way.

    As documented in jobs/transforms.py (score_pairs, expand_groups): a pair is near_duplicate when
    its Jaccard estimate reaches ``threshold``; with ``containment_threshold``, else a_in_b (b_in_a)
    when the containment of a in b (of b in a), the larger of the two, reaches it. Documents with
    the same normalized text form a group whose representative is its smallest id; a pair of
    representatives stands for every pair of their members; a group of at most ``max_exact_group``
    members adds every pair of its members (exact duplicates, 1.0 everywhere), a larger one only
    each member with its representative, and only its representative is paired with other
    documents. ``matches`` counts shared bottom-k hashes.
    """
    groups: dict[tuple, list] = defaultdict(list)
    for doc_id, row in rows.items():
        if row["sketch"] is not None:
            groups[(row["text_hash"], row["n_words"])].append(doc_id)
    members = {min(g): sorted(g) for g in groups.values()}
    standing = {rep: (m if len(m) <= max_exact_group else [rep]) for rep, m in members.items()}

    def sk(doc_id) -> Sketch:
        row = rows[doc_id]
        return Sketch(
            tuple(row["sketch"]),
            n_shingles=row["n_shingles"],
            width=width,
            k=k,
            unit=unit,
            sample_mod=sample_mod,
        )

    def n(doc_id) -> int:
        return rows[doc_id]["n_shingles"]

    def relation_of(j: float, ca: float, cb: float, jt: float, ct: float | None) -> str | None:
        if j >= jt:
            return NEAR_DUPLICATE
        if ct is not None and ca >= cb and ca >= ct:
            return A_IN_B
        if ct is not None and cb >= ct:
            return B_IN_A
        return None

    def lowered(t: float | None) -> float | None:
        return None if t is None or texts is None else max(0.05, round(t - margin, 9))

    out = []
    for ra, rb in itertools.combinations(sorted(members), 2):
        sa, sb = sk(ra), sk(rb)
        estimate, ca, cb = jaccard(sa, sb), containment(sa, sb), containment(sb, sa)
        j = estimate
        if texts is None:
            relation = relation_of(j, ca, cb, threshold, containment_threshold)
        else:
            cand_t, cand_ct = lowered(threshold), lowered(containment_threshold)
            assert cand_t is not None
            if relation_of(j, ca, cb, cand_t, cand_ct) is None:
                continue
            o = overlap(texts[ra], texts[rb], width=width, unit=unit)
            j, ca, cb = o.jaccard, o.containment_a, o.containment_b
            relation = relation_of(j, ca, cb, threshold, containment_threshold)
        if relation is None:
            continue
        shared = matches(sa, sb)
        for ma, mb in itertools.product(standing[ra], standing[rb]):
            if ma < mb:
                out.append((ma, mb, shared, j, estimate, ca, cb, n(ma), n(mb), False, relation))
            else:
                flipped = {A_IN_B: B_IN_A, B_IN_A: A_IN_B}.get(relation, relation)
                out.append((mb, ma, shared, j, estimate, cb, ca, n(mb), n(ma), False, flipped))
    for rep, m in members.items():
        exact = (
            itertools.combinations(m, 2) if len(m) <= max_exact_group else ((rep, x) for x in m[1:])
        )
        for a, b in exact:
            bottom = min(len(rows[a]["sketch"]), k)
            out.append((a, b, bottom, 1.0, 1.0, 1.0, 1.0, n(a), n(b), True, NEAR_DUPLICATE))
    return out


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
    """The pair table from the Spark path (jobs.transforms.near_duplicate_pairs); verified against
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
