"""shingling.hashing: xxHash64, signed, the same in Python and Spark SQL."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.hashing import SEED, shingle_hash, to_signed, to_unsigned, word_hash, xxhash64
from shingling.normalize import words

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
UINT64 = st.integers(min_value=0, max_value=2**64 - 1)


def real_words() -> list[str]:
    """Distinct words of a real licence text, and some real non-ASCII words."""
    text = Path("/usr/share/common-licenses/Apache-2.0").read_text(encoding="utf-8")
    found = list(dict.fromkeys(words(text)))[:200]
    # real non-ASCII words, as normalize() gives them
    found += words(
        "Université Paris-Sud, Jürgen Müller, François, Łódź, Ελληνικά, 中文, русский, ﬁle"
    )
    return found


def test_seed_is_sparks() -> None:
    assert SEED == 42


def test_golden_vector_of_spark_xxhash64() -> None:
    # Spark SQL: SELECT xxhash64('ABC') -> 4105715581806190027
    assert xxhash64(b"ABC") == 4105715581806190027
    assert word_hash("ABC") == 4105715581806190027


def test_golden_vectors_of_the_xxhash_package() -> None:
    # reference values of XXH64 (seed 0 and seed 42), read as signed
    assert xxhash64(b"", seed=0) == to_signed(0xEF46DB3751D8E999)
    assert xxhash64(b"abc", seed=0) == to_signed(0x44BC2CF5AD770999)
    assert xxhash64(b"abc") == to_signed(xxhash.xxh64_intdigest(b"abc", 42))


def test_word_hash_equals_spark_sql_xxhash64(spark) -> None:
    vocabulary = real_words()
    frame = spark.createDataFrame([(w,) for w in vocabulary], "word string")
    got = dict(frame.selectExpr("word", "xxhash64(word) AS h").collect())
    assert {w: word_hash(w) for w in vocabulary} == got


def test_shingle_hash_equals_spark_sql_xxhash64_of_its_lanes(spark) -> None:
    # Spark hashes a binary value's bytes: the shingle's little-endian word-hash lanes
    vocabulary = real_words()
    shingles = [vocabulary[i : i + n] for n in (1, 2, 4, 5, 9) for i in range(0, 40, 7)]
    lanes = [struct.pack(f"<{len(s)}q", *(word_hash(w) for w in s)) for s in shingles]
    frame = spark.createDataFrame([(i, b) for i, b in enumerate(lanes)], "i int, lanes binary")
    got = dict(frame.selectExpr("i", "xxhash64(lanes)").collect())
    assert got == {i: shingle_hash([word_hash(w) for w in s]) for i, s in enumerate(shingles)}


@settings(deadline=None)
@given(UINT64)
def test_signed_and_unsigned_round_trip(value: int) -> None:
    signed = to_signed(value)
    assert -(2**63) <= signed < 2**63
    assert to_unsigned(signed) == value
    assert signed % 2**64 == value


@settings(deadline=None)
@given(st.text())
def test_hashes_are_signed_64_bit(text: str) -> None:
    h = xxhash64(text.encode("utf-8", "surrogatepass"))
    assert -(2**63) <= h < 2**63


@settings(deadline=None)
@given(st.lists(INT64, min_size=1, max_size=12))
def test_shingle_hash_is_xxhash64_of_the_lanes(hashes: list[int]) -> None:
    packed = b"".join((h % 2**64).to_bytes(8, "little") for h in hashes)
    assert shingle_hash(hashes) == to_signed(xxhash.xxh64_intdigest(packed, 42))


def test_shingle_hash_depends_on_word_order() -> None:
    a, b, c, d = (word_hash(w) for w in ("once", "upon", "a", "time"))
    assert shingle_hash([a, b, c, d]) != shingle_hash([b, a, c, d])
    assert shingle_hash([a, b]) != shingle_hash([a, b, a])


def test_real_shingles_do_not_collide() -> None:
    text = Path("/usr/share/common-licenses/GPL-3").read_text(encoding="utf-8")
    w = words(text)
    hashed = [word_hash(x) for x in w]
    by_hash: dict[int, tuple[str, ...]] = {}
    for i in range(len(w) - 3):
        shingle, h = tuple(w[i : i + 4]), shingle_hash(hashed[i : i + 4])
        assert by_hash.setdefault(h, shingle) == shingle
    assert len(by_hash) > 4000


@pytest.mark.parametrize("word", ["", "a", "ab" * 40])
def test_word_hash_is_xxhash64_of_utf8(word: str) -> None:
    assert word_hash(word) == to_signed(xxhash.xxh64_intdigest(word.encode("utf-8"), 42))
