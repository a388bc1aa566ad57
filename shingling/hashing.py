"""Hashes: xxHash64, as signed 64-bit integers.

Every hash in shingling is a signed 64-bit integer, so that "the k smallest" means the same in
Python, Arrow, Parquet and Spark SQL (whose ``bigint`` is signed).

- A **word hash** is xxHash64 of the word's UTF-8 bytes with seed 42, the seed of Spark's built-in
  ``xxhash64``, so Spark SQL ``xxhash64('word')`` gives the same number.
- A **shingle hash** is xxHash64 (seed 42) of the shingle written as its words' hashes: the
  little-endian unsigned 8-byte word hashes, concatenated. Each distinct word is hashed once and a
  shingle costs one fixed-size xxHash64 block, which :mod:`shingling.fast.sketch` computes for a whole
  batch at once with numpy; the collision odds are those of xxHash64 on the shingle text.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import xxhash

SEED = 42
_UINT64 = 1 << 64
_INT64_MAX = (1 << 63) - 1


def to_signed(value: int) -> int:
    """Read an unsigned 64-bit integer as a signed one (two's complement).

    >>> to_signed(2**64 - 1)
    -1
    >>> to_signed(5)
    5
    """
    return value - _UINT64 if value > _INT64_MAX else value


def to_unsigned(value: int) -> int:
    """Read a signed 64-bit integer as an unsigned one.

    >>> to_unsigned(-1) == 2**64 - 1
    True
    """
    return value + _UINT64 if value < 0 else value


def xxhash64(data: bytes, seed: int = SEED) -> int:
    """xxHash64 of bytes, signed; equals Spark SQL ``xxhash64`` on a string's UTF-8 bytes.

    >>> xxhash64("ABC".encode())
    4105715581806190027
    """
    return to_signed(xxhash.xxh64_intdigest(data, seed))


def text_checksum(text: str) -> int:
    """The checksum of a raw text (not normalized): xxHash64 of its UTF-8 bytes, seed 42, which
    Spark SQL computes as ``xxhash64(text)``. The documents table records it, so that a corpus can
    be checked against the run that sketched it in the JVM, without sketching it again.

    >>> text_checksum("ABC") == xxhash64(b"ABC")
    True
    """
    return xxhash64(text.encode("utf-8"))


def word_hash(word: str) -> int:
    """The hash of one (normalized) word.

    >>> word_hash("ABC")
    4105715581806190027
    """
    return xxhash64(word.encode("utf-8"))


def shingle_hash(word_hashes: Sequence[int]) -> int:
    """The hash of a shingle, given the hashes of its words in order.

    >>> shingle_hash([word_hash(w) for w in "once upon a time".split()])
    -3753499539404272787
    """
    lanes = struct.pack(f"<{len(word_hashes)}Q", *(to_unsigned(h) for h in word_hashes))
    return xxhash64(lanes)


def text_hash(word_hashes: Sequence[int]) -> int:
    """The hash of a whole normalized text: its word hashes as one long shingle.

    Texts with the same words in the same order have the same text hash; the Spark job groups exact
    duplicates by it.

    >>> text_hash([word_hash("a"), word_hash("b")]) == shingle_hash([word_hash("a"), word_hash("b")])
    True
    """
    return shingle_hash(word_hashes)
