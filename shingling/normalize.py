"""Text normalization: the one definition of what a "word" is.

A document is normalized in three steps, always in this order:

1. Unicode NFKC, so that the same text typed differently (a precomposed or a decomposed "é",
   full-width "Ａ", the ligature "ﬁ") gives the same words;
2. lowercase, Unicode-aware (simple case mapping, code point by code point: "İ" becomes "i"), and
   variation selectors (U+FE00-FE0F, U+E0100-E01EF: glyph choices, not letters) removed;
3. every run of characters that are not letters, combining marks or numbers (Unicode general
   categories L*, M*, N*) becomes one space, and leading and trailing spaces are removed.

Combining marks count as part of a word: without them a Devanagari or Thai word would fall apart at
every vowel sign. This is the seed's ``lc`` and ``tr/a-z0-9/ /c`` for every script.

The steps are Arrow compute kernels (utf8proc and RE2 tables), applied to one string here and to a
whole batch in :mod:`shingling.fast.sketch`: one implementation, so the library and the Spark job cannot
disagree on a character, whatever Unicode version the Python interpreter ships.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Variation selectors choose a glyph (emoji or text style, a Han variant) and carry no letter: they
#: are dropped with the fold, so "❤️" is no word and "葛󠄀城" reads "葛城".
VARIATION_SELECTORS = r"[\x{FE00}-\x{FE0F}\x{E0100}-\x{E01EF}]"

#: A run of characters that are not part of a word (RE2 syntax).
NON_WORD_RUN = r"[^\p{L}\p{M}\p{N}]+"


def fold_array(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Steps 1 and 2 of normalization, NFKC then lowercase, on an Arrow string array.

    >>> fold_array(pa.array(["ＡBC ﬁ"])).to_pylist()
    ['abc fi']
    """
    folded = pc.utf8_lower(pc.utf8_normalize(texts, form="NFKC"))
    if isinstance(folded, pa.ChunkedArray):
        folded = folded.combine_chunks()
    marked = _has_variation_selector(folded)
    if not marked.any():  # the usual case: spare the batch a regex pass
        return folded
    mask = pa.array(marked)
    cleaned = pc.replace_substring_regex(
        folded.filter(mask), pattern=VARIATION_SELECTORS, replacement=""
    )
    return pc.replace_with_mask(folded, mask, cleaned)


def _has_variation_selector(texts: pa.Array) -> np.ndarray:
    """Per string, whether its UTF-8 holds a variation selector (EF B8 80-8F, or F3 A0 84 80 to
    F3 A0 87 AF)."""
    arr = texts.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[
        arr.offset : arr.offset + len(arr) + 1
    ]
    data = arr.buffers()[2]
    b = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    if len(b) < 3:
        return np.zeros(len(arr), dtype=bool)
    # one pass over the bytes finds the few that can lead a selector (EF, F3 and the other lead
    # bytes of 3- and 4-byte characters above them); only those are looked at further
    lead = np.flatnonzero(b[:-2] >= 0xEF)
    first, second, third = b[lead], b[lead + 1], b[lead + 2]
    fourth = b[np.minimum(lead + 3, len(b) - 1)]
    hits = lead[
        ((first == 0xEF) & (second == 0xB8) & (third >= 0x80) & (third <= 0x8F))
        | (
            (first == 0xF3)
            & (second == 0xA0)
            & (((third >= 0x84) & (third <= 0x86)) | ((third == 0x87) & (fourth <= 0xAF)))
        )
    ]
    hits = hits[(hits >= offsets[0]) & (hits < offsets[-1])]  # a sliced array's own bytes only
    marked = np.zeros(len(arr), dtype=bool)
    marked[np.searchsorted(offsets, hits, side="right") - 1] = True
    return marked & pc.is_valid(arr).to_numpy(zero_copy_only=False)


def normalize_array(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Normalize every string of an Arrow string array; nulls stay null.

    >>> normalize_array(pa.array(["Hello,  World!", None])).to_pylist()
    ['hello world', None]
    """
    spaced = pc.replace_substring_regex(fold_array(texts), pattern=NON_WORD_RUN, replacement=" ")
    return pc.utf8_trim(spaced, characters=" ")


def normalize(text: str) -> str:
    """Normalize one text: NFKC, lowercase, non-word runs to one space, trimmed.

    >>> normalize("Once upon a TIME, in a land far away... (5.5 toes)")
    'once upon a time in a land far away 5 5 toes'
    >>> normalize("Ｃafé — ﬁne!")
    'café fine'
    """
    result = normalize_array(pa.array([text], type=pa.string()))[0].as_py()
    assert isinstance(result, str)
    return result


def words(text: str) -> list[str]:
    """The words of a text, after normalization.

    >>> words("He was big. Really big!")
    ['he', 'was', 'big', 'really', 'big']
    >>> words(" ... ")
    []
    """
    normalized = normalize(text)
    return normalized.split(" ") if normalized else []
