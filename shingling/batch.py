"""Sketching a whole Arrow batch of texts at once: the vectorized form of :mod:`shingling.sketch`.

The Spark job runs this on the executors (one call per Arrow record batch); it gives exactly the
sketches of :func:`shingling.sketch.sketch`, which the parity tests check bit for bit. Where the
time goes, and why it is shaped like this:

- NFKC and lowercasing are Arrow kernels over the whole batch (C++, the same kernels as
  :func:`shingling.normalize.normalize`);
- words are then cut out of the batch's UTF-8 bytes with numpy: a byte belongs to a word when its
  code point is a letter, mark or number, looked up in a table that the normalizer's own regular
  expression built (so the two cannot disagree); this replaces a regex pass and a split, 4x slower;
- each *distinct* word of the batch is hashed once with the ``xxhash`` package, so the Python loop
  runs over the batch's vocabulary, not over its words;
- shingle hashes are xxHash64 of word-hash lanes, computed for every shingle at once in numpy;
- the bottom-k of every document comes from one sort of the batch's hashes and a stable radix sort
  of their document numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from shingling.hashing import SEED
from shingling.normalize import NON_WORD_RUN, fold_array, normalize_array
from shingling.sketch import UNITS, sample_bound
from shingling.xxh64_numpy import xxh64_lanes


@dataclass(frozen=True)
class BatchSketches:
    """The sketches of a batch of texts, one row per input text.

    Attributes:
        n_words: words per text after normalization (0 for a null text or one with no words).
        n_shingles: distinct shingle hashes per text (0 when it has no words).
        sketch: the bottom-k sketch of each text, ascending; null when it has no words.
        text_hash: :func:`shingling.hashing.text_hash` of each text: equal for texts with the same
            words; null when the text has no words.
    """

    n_words: np.ndarray
    n_shingles: np.ndarray
    sketch: pa.ListArray
    text_hash: pa.Int64Array


@functools.cache
def word_code_points() -> np.ndarray:
    """A boolean per Unicode code point: True where it is part of a word (see normalize.py).

    Built once per process by running the normalizer's own pattern over every code point.
    """
    cps = np.arange(0x110000, dtype=np.int64)
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]  # surrogates cannot occur in UTF-8
    sizes = np.select([cps < 0x80, cps < 0x800, cps < 0x10000], [1, 2, 3], 4)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    data = "".join(map(chr, cps.tolist())).encode("utf-8")
    chars = pa.Array.from_buffers(
        pa.large_string(), len(cps), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    separator = pc.match_substring_regex(chars, pattern=f"^{NON_WORD_RUN}$")
    table = np.zeros(0x110000, dtype=bool)
    table[cps] = ~separator.to_numpy(zero_copy_only=False)
    return table


@functools.cache
def _ascii_word_bytes() -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[:0x80] = word_code_points()[:0x80]
    return table


def _string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The int64 value offsets (from 0) and the UTF-8 bytes of a string array's values."""
    arr = arr.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[
        arr.offset : arr.offset + len(arr) + 1
    ]
    data = arr.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return offsets - offsets[0], raw[offsets[0] : offsets[-1]]


def _word_bytes(b: np.ndarray) -> np.ndarray:
    """For each byte of UTF-8 text, whether it belongs to a word (letter, mark or number)."""
    is_word = _ascii_word_bytes()[b]
    leads = np.flatnonzero(b >= 0xC0)
    if len(leads):
        n = len(b)
        lead = b[leads].astype(np.int64)
        c = [b[np.minimum(leads + j, n - 1)].astype(np.int64) & 0x3F for j in (1, 2, 3)]
        cp = np.select(
            [lead >= 0xF0, lead >= 0xE0],
            [
                ((lead & 0x07) << 18) | (c[0] << 12) | (c[1] << 6) | c[2],
                ((lead & 0x0F) << 12) | (c[0] << 6) | c[1],
            ],
            ((lead & 0x1F) << 6) | c[0],
        )
        word = word_code_points()[np.minimum(cp, 0x10FFFF)]
        length = np.select([lead >= 0xF0, lead >= 0xE0], [4, 3], 2)
        for j in range(4):
            at = length > j
            is_word[leads[at] + j] = word[at]
    return is_word


def split_words(folded: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The words of NFKC-lowercased texts (one binary array) and the number of words of each text.

    >>> words, counts = split_words(pa.array(["a, bc", None, "", "d"]))
    >>> words.to_pylist(), counts.tolist()
    ([b'a', b'bc', b'd'], [2, 0, 0, 1])
    """
    offsets, b = _string_buffers(folded)
    is_word = _word_bytes(b)
    if folded.null_count:  # a null slot may still own bytes in the buffer
        for i in np.flatnonzero(pc.is_null(folded).to_numpy(zero_copy_only=False)):
            is_word[offsets[i] : offsets[i + 1]] = False
    inner = offsets[1:-1]
    inner = inner[inner < len(b)]
    before = np.zeros(len(b), dtype=bool)  # the previous byte is a word byte of the same text
    before[1:] = is_word[:-1]
    before[inner] = False
    after = np.zeros(len(b), dtype=bool)  # the next byte is a word byte of the same text
    after[:-1] = is_word[1:]
    after[inner - 1] = False
    starts = np.flatnonzero(is_word & ~before)
    ends = np.flatnonzero(is_word & ~after) + 1
    word_offsets = np.concatenate(([0], np.cumsum(ends - starts))).astype(np.int64)
    words = pa.Array.from_buffers(
        pa.large_binary(),
        len(starts),
        [None, pa.py_buffer(word_offsets), pa.py_buffer(np.ascontiguousarray(b[is_word]))],
    )
    counts = np.diff(np.searchsorted(starts, offsets)).astype(np.int64)
    return words, counts


def split_chars(normalized: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The characters of normalized texts (one binary array) and the number of each text's.

    >>> chars, counts = split_chars(pa.array(["ab c", None, "é"]))
    >>> chars.to_pylist(), counts.tolist()
    ([b'a', b'b', b' ', b'c', b'\\xc3\\xa9'], [4, 0, 1])
    """
    offsets, b = _string_buffers(pc.fill_null(normalized, ""))
    starts = np.flatnonzero((b & 0xC0) != 0x80)  # a character starts at every non-continuation byte
    char_offsets = np.concatenate((starts, [len(b)])).astype(np.int64)
    chars = pa.Array.from_buffers(
        pa.large_binary(),
        len(starts),
        [None, pa.py_buffer(char_offsets), pa.py_buffer(np.ascontiguousarray(b))],
    )
    return chars, np.diff(np.searchsorted(starts, offsets)).astype(np.int64)


def _word_hashes(words: pa.Array) -> np.ndarray:
    """xxHash64 of every word, hashing each distinct word once."""
    if len(words) == 0:
        return np.zeros(0, dtype=np.uint64)
    encoded = pc.dictionary_encode(words)
    vocabulary = encoded.dictionary
    offsets, data = _string_buffers(vocabulary.cast(pa.large_binary()).view(pa.large_string()))
    raw = data.data  # a memoryview of the bytes
    digest = xxhash.xxh64_intdigest
    per_word = np.fromiter(
        (digest(raw[offsets[i] : offsets[i + 1]], SEED) for i in range(len(vocabulary))),
        dtype=np.uint64,
        count=len(vocabulary),
    )
    return per_word[encoded.indices.to_numpy(zero_copy_only=False)]


def _text_hashes(word_hashes: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> pa.Int64Array:
    lanes = np.ascontiguousarray(word_hashes.astype("<u8")).view(np.uint8).data
    out = np.zeros(len(counts), dtype=np.uint64)
    digest = xxhash.xxh64_intdigest
    for i in np.flatnonzero(counts):
        out[i] = digest(lanes[8 * starts[i] : 8 * (starts[i] + counts[i])], SEED)
    return pa.array(out.view(np.int64), mask=counts == 0)


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


def _sort_by_doc_then_hash(hashes: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
    # One quicksort of the hashes, then a stable sort of the document numbers: numpy sorts 16-bit
    # integers by radix, so this is about 5x faster than np.lexsort on the two keys.
    by_hash = np.argsort(hashes)
    doc_type = np.uint16 if n_docs <= 1 << 16 else np.int64
    by_doc = np.argsort(doc[by_hash].astype(doc_type), kind="stable")
    return by_hash[by_doc]


def sketch_batch(
    texts: pa.Array | pa.ChunkedArray,
    *,
    width: int,
    k: int,
    unit: str = "words",
    sample_mod: int = 0,
) -> BatchSketches:
    """Sketch every text of an Arrow string array (see :class:`BatchSketches`).

    ``unit`` and ``sample_mod`` are those of :func:`shingling.sketch.sketch`.

    >>> out = sketch_batch(pa.array(["A b c d e", None, "...", "x"]), width=4, k=20)
    >>> out.n_shingles.tolist(), out.sketch.is_null().to_pylist()
    ([2, 0, 0, 1], [False, True, True, False])
    """
    if width < 1 or k < 1:
        raise ValueError(f"width and k must be at least 1, got width={width}, k={k}")
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if unit == "chars":
        words, counts = split_chars(normalize_array(texts))
    else:
        words, counts = split_words(fold_array(texts))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    word_hashes = _word_hashes(words)

    hashes, doc = _shingle_hashes(word_hashes, starts, counts, width)
    order = _sort_by_doc_then_hash(hashes, doc, len(counts))
    hashes, doc = hashes[order], doc[order]
    distinct = np.ones(len(hashes), dtype=bool)
    distinct[1:] = (hashes[1:] != hashes[:-1]) | (doc[1:] != doc[:-1])
    hashes, doc = hashes[distinct], doc[distinct]

    n_shingles = np.bincount(doc, minlength=len(counts)).astype(np.int64)
    first_of_doc = np.cumsum(n_shingles) - n_shingles
    keep = (np.arange(len(hashes)) - first_of_doc[doc]) < k
    bound = sample_bound(sample_mod)
    if bound is not None:
        keep |= hashes < bound
    sizes = np.bincount(doc[keep], minlength=len(counts))
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int32)
    sketch = pa.ListArray.from_arrays(
        pa.array(offsets), pa.array(hashes[keep], type=pa.int64()), mask=pa.array(counts == 0)
    )
    return BatchSketches(
        n_words=counts,
        n_shingles=n_shingles,
        sketch=sketch,
        text_hash=_text_hashes(word_hashes, starts, counts),
    )
