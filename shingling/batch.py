"""Sketching a whole Arrow batch of texts at once: the vectorized form of :mod:`shingling.sketch`.

The Spark job runs this on the executors (one call per Arrow record batch); it gives exactly the
sketches of :func:`shingling.sketch.sketch`, which the parity tests check bit for bit. Where the
time goes, and why it is shaped like this:

- normalization and word splitting are Arrow kernels over the whole batch (C++);
- each *distinct* word of the batch is hashed once with the ``xxhash`` package, so the Python loop
  runs over the batch's vocabulary, not over its words;
- shingle hashes are xxHash64 of word-hash lanes, computed for every shingle at once in numpy;
- the bottom-k of every document comes from one sort of the batch's (document, hash) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from shingling.hashing import SEED
from shingling.normalize import normalize_array
from shingling.xxh64_numpy import xxh64_lanes


@dataclass(frozen=True)
class BatchSketches:
    """The sketches of a batch of texts, one row per input text.

    Attributes:
        n_words: words per text after normalization (0 for a null text or one with no words).
        n_shingles: distinct shingle hashes per text (0 when it has no words).
        sketch: the bottom-k sketch of each text, ascending; null when it has no words.
        text_hash: xxHash64 of the normalized text: equal for texts with the same words; null when
            the text has no words.
    """

    n_words: np.ndarray
    n_shingles: np.ndarray
    sketch: pa.ListArray
    text_hash: pa.Int64Array


def _string_buffers(arr: pa.Array) -> tuple[np.ndarray, memoryview]:
    """The int64 value offsets and the data buffer of a (large) string array."""
    arr = arr.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    return offsets, memoryview(data if data is not None else b"")


def _text_hashes(normalized: pa.Array, has_words: np.ndarray) -> pa.Int64Array:
    offsets, data = _string_buffers(normalized)
    out = np.zeros(len(normalized), dtype=np.uint64)
    for i in np.flatnonzero(has_words):
        out[i] = xxhash.xxh64_intdigest(data[offsets[i] : offsets[i + 1]], SEED)
    return pa.array(out.view(np.int64), mask=~has_words)


def _word_hashes(words: pa.Array) -> np.ndarray:
    """xxHash64 of every word, hashing each distinct word once."""
    if len(words) == 0:
        return np.zeros(0, dtype=np.uint64)
    encoded = pc.dictionary_encode(words)
    vocabulary = encoded.dictionary
    offsets, data = _string_buffers(vocabulary)
    digest = xxhash.xxh64_intdigest
    per_word = np.fromiter(
        (digest(data[offsets[i] : offsets[i + 1]], SEED) for i in range(len(vocabulary))),
        dtype=np.uint64,
        count=len(vocabulary),
    )
    return per_word[encoded.indices.to_numpy(zero_copy_only=False)]


def _shingle_hashes(
    word_hashes: np.ndarray, starts: np.ndarray, counts: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every shingle's hash (signed) and the index of its document."""
    docs = np.arange(len(counts))
    doc_of_word = np.repeat(docs, counts)
    position = np.arange(len(word_hashes)) - starts[doc_of_word]
    first = np.flatnonzero(position <= counts[doc_of_word] - width)  # full-width windows
    parts_hash = [xxh64_lanes([word_hashes[first + j] for j in range(width)], SEED)]
    parts_doc = [doc_of_word[first]]
    for n in range(1, width):  # a document shorter than width is one shingle of all its words
        short = docs[counts == n]
        if len(short):
            parts_hash.append(xxh64_lanes([word_hashes[starts[short] + j] for j in range(n)], SEED))
            parts_doc.append(short)
    return np.concatenate(parts_hash).view(np.int64), np.concatenate(parts_doc)


def sketch_batch(texts: pa.Array | pa.ChunkedArray, *, width: int, k: int) -> BatchSketches:
    """Sketch every text of an Arrow string array (see :class:`BatchSketches`).

    >>> out = sketch_batch(pa.array(["A b c d e", None, "...", "x"]), width=4, k=20)
    >>> out.n_shingles.tolist(), out.sketch.is_null().to_pylist()
    ([2, 0, 0, 1], [False, True, True, False])
    """
    if width < 1 or k < 1:
        raise ValueError(f"width and k must be at least 1, got width={width}, k={k}")
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    normalized = normalize_array(texts)
    has_words = pc.fill_null(pc.not_equal(normalized, ""), False).to_numpy(zero_copy_only=False)
    word_lists = pc.split_pattern(pc.if_else(has_words, normalized, None), " ")
    counts = pc.fill_null(pc.list_value_length(word_lists), 0).to_numpy().astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)

    hashes, doc = _shingle_hashes(_word_hashes(word_lists.flatten()), starts, counts, width)
    order = np.lexsort((hashes, doc))
    hashes, doc = hashes[order], doc[order]
    distinct = np.ones(len(hashes), dtype=bool)
    distinct[1:] = (hashes[1:] != hashes[:-1]) | (doc[1:] != doc[:-1])
    hashes, doc = hashes[distinct], doc[distinct]

    n_shingles = np.bincount(doc, minlength=len(counts)).astype(np.int64)
    first_of_doc = np.cumsum(n_shingles) - n_shingles
    keep = (np.arange(len(hashes)) - first_of_doc[doc]) < k
    sizes = np.minimum(n_shingles, k)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int32)
    sketch = pa.ListArray.from_arrays(
        pa.array(offsets), pa.array(hashes[keep], type=pa.int64()), mask=pa.array(~has_words)
    )
    return BatchSketches(
        n_words=counts,
        n_shingles=n_shingles,
        sketch=sketch,
        text_hash=_text_hashes(normalized, has_words),
    )
