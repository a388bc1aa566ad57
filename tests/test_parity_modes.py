"""Every mode of the job agrees with the library: words or chars, bottom-k or mod-m sketches.

The Spark path (jobs.transforms.sketch_documents) must give the library's sketch() bit for bit in
every mode, and the pair table in containment mode must be the one computed in pure Python from
library sketches with shingling.estimators, comparing every pair.
"""

from __future__ import annotations

import itertools
import random
import sysconfig
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType
from pyspark.testing import assertDataFrameEqual
from testdata import DOCUMENT, licence_texts, licence_words, sample_corpus

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
    pairs_schema,
)
from jobs.transforms import near_duplicate_pairs, sketch_documents
from shingling.estimators import containment, jaccard, matches
from shingling.hashing import text_hash, word_hash
from shingling.sketch import Sketch, sketch, tokens

DEFAULTS = config_module.load()
WIDTH, K = DEFAULTS.sketch.width, DEFAULTS.sketch.k
THRESHOLD, CONTAINMENT = DEFAULTS.pairs.threshold, DEFAULTS.pairs.containment_threshold
CJK_SAMPLES = Path(sysconfig.get_paths()["stdlib"]) / "test" / "cjkencodings"
# (unit, width, sample_mod): both units, with and without the mod-m sample
MODES = [("words", WIDTH, 0), ("words", WIDTH, 8), ("chars", 5, 0), ("chars", 5, 8)]


# --- sketches ------------------------------------------------------------------------------------


def library_row(text: str | None, width: int, k: int, unit: str, m: int) -> dict:
    """What a text's row of the documents table must hold, from the per-document library."""
    found = tokens(text, unit) if text is not None else []
    if not found:
        return {"n_words": 0, "n_shingles": 0, "sketch": None, "text_hash": None}
    s = sketch(text, width=width, k=k, unit=unit, sample_mod=m)
    return {
        "n_words": len(found),
        "n_shingles": s.n_shingles,
        "sketch": list(s.hashes),
        "text_hash": text_hash([word_hash(t) for t in found]),
    }


def expected_documents(
    spark: SparkSession, docs: list[tuple], id_type, *, width: int, k: int, unit: str, m: int
) -> DataFrame:
    rows = []
    for doc_id, text in docs:
        row = library_row(None if doc_id is None else text, width, k, unit, m)
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
    spark: SparkSession, docs: list[tuple], id_type, *, width: int, k: int, unit: str, m: int
) -> DataFrame:
    frame = spark.createDataFrame(docs, f"{DOC_ID} {id_type.simpleString()}, {TEXT} string")
    return frame.transform(sketch_documents, width=width, k=k, unit=unit, sample_mod=m)


def random_texts(rng: random.Random, n: int) -> list[str | None]:
    """n texts of real words, random code points of every plane (no surrogates) and separators."""
    vocabulary = licence_words()[:300]

    def code_point() -> str:
        while True:
            cp = rng.randrange(0x110000) if rng.random() < 0.3 else rng.randrange(0x3100)
            if not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)

    texts: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.05:
            texts.append(rng.choice([None, "", " ", "...", "\u3000«»"]))
            continue
        parts = []
        for _ in range(rng.choice([1, 2, 3, 5, rng.randrange(6, 300)])):
            token = rng.choice(vocabulary) if rng.random() < 0.5 else ""
            token = token or "".join(code_point() for _ in range(rng.randrange(1, 8)))
            parts.append(token + rng.choice([" ", ", ", ".\n", "", "\t", "、", "\u00a0"]))
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize(("unit", "width", "m"), MODES)
def test_spark_sketches_equal_library_sketches_on_random_unicode(
    spark: SparkSession, unit: str, width: int, m: int
) -> None:
    docs = [(f"doc-{i}", t) for i, t in enumerate(random_texts(random.Random(width + m), 300))]
    mode = {"width": width, "k": K, "unit": unit, "m": m}
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType(), **mode),
        expected_documents(spark, docs, StringType(), **mode),
    )


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(DOCUMENT, min_size=1, max_size=60),
    st.sampled_from(["words", "chars"]),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=30),
    st.sampled_from([0, 1, 2, 5]),
)
def test_spark_sketches_equal_library_sketches_on_hypothesis_texts(
    spark: SparkSession, texts: list[str | None], unit: str, width: int, k: int, m: int
) -> None:
    docs = [(None if i % 13 == 12 else i, t) for i, t in enumerate(texts)]
    mode = {"width": width, "k": k, "unit": unit, "m": m}
    assertDataFrameEqual(
        spark_documents(spark, docs, LongType(), **mode),
        expected_documents(spark, docs, LongType(), **mode),
    )


def real_documents() -> list[tuple[str, str]]:
    """Every eighth document of the sample corpus, and each line of Python's CJK codec samples."""
    docs = list(sample_corpus())[::8]
    for path in sorted(CJK_SAMPLES.glob("*-utf8.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        docs += [(f"{path.stem}-{i}", line) for i, line in enumerate(lines)]
    return docs


@pytest.mark.parametrize(("unit", "width", "m"), MODES[1:])  # test_parity.py checks the default
def test_spark_sketches_equal_library_sketches_on_real_text(
    spark: SparkSession, unit: str, width: int, m: int
) -> None:
    docs = real_documents()
    assert any("-utf8-" in doc_id for doc_id, _ in docs)
    mode = {"width": width, "k": K, "unit": unit, "m": m}
    assertDataFrameEqual(
        spark_documents(spark, docs, StringType(), **mode),
        expected_documents(spark, docs, StringType(), **mode),
    )


# --- the pair table in containment mode ----------------------------------------------------------


def light_edits(
    tokens_: list[str], rate: float, vocabulary: list[str], rng: random.Random
) -> list[str]:
    """Replace, delete or insert a word at about ``rate`` of the positions (at least one)."""
    out = list(tokens_)
    for _ in range(max(1, round(rate * len(out)))):
        at, op = rng.randrange(len(out)), rng.choice("rdi")
        if op == "r":
            out[at] = rng.choice(vocabulary)
        elif op == "d":
            del out[at]
        else:
            out.insert(at, rng.choice(vocabulary))
    return out


def excerpt_corpus(seed: int = 3) -> list[tuple[int, str]]:
    """The machine's licences, plus planted excerpts of them and exact copies.

    Excerpts are passages of 30 to 800 words with 0-5% of their words edited, standing alone,
    wrapped in up to as many words of another licence, or lifted into another licence (a host).
    Some documents get exact copies (case and punctuation changed), so that exact groups meet
    excerpts. Ids are integers in shuffled order, so doc_a is the excerpt as often as the source.
    """
    rng = random.Random(seed)
    sources = {
        name: text.split() for name, text in licence_texts().items() if len(text.split()) > 900
    }
    vocabulary = list(licence_words())
    texts = [" ".join(t) for t in sources.values()]
    names = sorted(sources)
    for i in range(45):
        source, other = (sources[n] for n in rng.sample(names, 2))
        length = rng.choice([30, 80, 150, 300, 800])
        start = rng.randrange(len(source) - length)
        passage = light_edits(source[start : start + length], rng.uniform(0, 0.05), vocabulary, rng)
        kind = i % 3
        if kind == 0:  # standing alone
            texts.append(" ".join(passage))
        elif kind == 1:  # wrapped in other text
            extra = rng.randrange(0, length + 1)
            cut = rng.randrange(len(other) - extra)
            texts.append(
                " ".join(
                    other[cut : cut + extra // 2] + passage + other[cut + extra // 2 : cut + extra]
                )
            )
        else:  # lifted into a host, and kept standing alone too
            at = rng.randrange(len(other))
            texts.append(" ".join(other[:at] + passage + other[at:]))
            texts.append(" ".join(passage))
    for text in rng.sample(texts, 12):
        texts.append(text.upper() + " !!")
    texts += [texts[-1].lower(), "« " + texts[-1] + " »"]  # a group of four: larger than 2
    ids = rng.sample(range(1_000, 9_999), len(texts))
    return list(zip(ids, texts, strict=True))


def reference_pairs(rows: dict, *, mode: dict, max_exact_group: int) -> list[tuple]:
    """The pair table from library sketches and estimators, comparing every pair of representatives.

    As documented in jobs/transforms.py (score_pairs, expand_groups): a pair is near_duplicate when
    its Jaccard estimate reaches pairs.threshold, else a_in_b (b_in_a) when the containment of a in
    b (of b in a), the larger of the two, reaches pairs.containment_threshold. Documents with the
    same normalized text form a group whose representative (smallest id) stands for its members;
    exact duplicates score 1.0 everywhere, and ``matches`` counts shared bottom-k hashes.
    """
    k = mode["k"]
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
            width=mode["width"],
            k=k,
            unit=mode["unit"],
            sample_mod=mode["m"],
        )

    def n(doc_id) -> int:
        return rows[doc_id]["n_shingles"]

    out = []
    for ra, rb in itertools.combinations(sorted(members), 2):
        sa, sb = sk(ra), sk(rb)
        j, ca, cb = jaccard(sa, sb), containment(sa, sb), containment(sb, sa)
        if j >= THRESHOLD:
            relation = NEAR_DUPLICATE
        elif ca >= cb and ca >= CONTAINMENT:
            relation = A_IN_B
        elif cb >= CONTAINMENT:
            relation = B_IN_A
        else:
            continue
        shared = matches(sa, sb)
        for ma, mb in itertools.product(standing[ra], standing[rb]):
            if ma < mb:
                out.append((ma, mb, shared, j, ca, cb, n(ma), n(mb), False, relation))
            else:
                flipped = {A_IN_B: B_IN_A, B_IN_A: A_IN_B}.get(relation, relation)
                out.append((mb, ma, shared, j, cb, ca, n(mb), n(ma), False, flipped))
    for rep, m in members.items():
        exact = (
            itertools.combinations(m, 2) if len(m) <= max_exact_group else ((rep, x) for x in m[1:])
        )
        for a, b in exact:
            bottom = min(len(rows[a]["sketch"]), k)
            out.append((a, b, bottom, 1.0, 1.0, 1.0, n(a), n(b), True, NEAR_DUPLICATE))
    return out


def spark_pairs(documents: DataFrame, *, mode: dict, max_exact_group: int) -> DataFrame:
    return documents.transform(
        near_duplicate_pairs,
        threshold=THRESHOLD,
        k=mode["k"],
        max_exact_group=max_exact_group,
        max_posting=DEFAULTS.pairs.max_posting,
        containment_threshold=CONTAINMENT if mode["m"] else None,
    )


@pytest.fixture(scope="module")
def planted() -> list[tuple[int, str]]:
    return excerpt_corpus()


@pytest.mark.parametrize(
    ("unit", "width", "m", "max_exact_group", "max_words"),
    [("words", WIDTH, 8, 2, None), ("chars", 7, 16, 100, 400)],
)
def test_containment_pair_table_equals_pure_python_pairs_on_planted_excerpts(
    spark: SparkSession,
    planted: list[tuple[int, str]],
    unit: str,
    width: int,
    m: int,
    max_exact_group: int,
    max_words: int | None,
) -> None:
    docs = [(i, t) for i, t in planted if max_words is None or len(t.split()) <= max_words]
    mode = {"width": width, "k": K, "unit": unit, "m": m}
    rows = {doc_id: library_row(text, width, K, unit, m) for doc_id, text in docs}
    expected = reference_pairs(rows, mode=mode, max_exact_group=max_exact_group)
    relations = {e[-1] for e in expected if not e[-2]}
    assert relations == {NEAR_DUPLICATE, A_IN_B, B_IN_A}, relations  # every kind is exercised
    assert any(e[-2] for e in expected)  # and exact duplicates
    got = spark_pairs(
        spark_documents(spark, docs, LongType(), **mode), mode=mode, max_exact_group=max_exact_group
    )
    assertDataFrameEqual(got, spark.createDataFrame(expected, pairs_schema(LongType())))


def test_resemblance_pairs_are_the_same_in_both_modes(
    spark: SparkSession, planted: list[tuple[int, str]]
) -> None:
    # the near_duplicate rows of a containment run are the default run's pairs, column for column
    # but the containment estimates (which use the mod-m sample)
    columns = [
        "doc_a",
        "doc_b",
        "matches",
        "jaccard",
        "shingles_a",
        "shingles_b",
        "exact_duplicate",
    ]
    plain = {"width": WIDTH, "k": K, "unit": "words", "m": 0}
    sampled = {**plain, "m": 16}
    default_run = spark_pairs(
        spark_documents(spark, planted, LongType(), **plain), mode=plain, max_exact_group=100
    ).cache()
    containment_run = spark_pairs(
        spark_documents(spark, planted, LongType(), **sampled), mode=sampled, max_exact_group=100
    )
    assert default_run.where(f"relation != '{NEAR_DUPLICATE}'").count() == 0
    assertDataFrameEqual(
        containment_run.where(f"relation = '{NEAR_DUPLICATE}'").select(*columns),
        default_run.select(*columns),
    )
