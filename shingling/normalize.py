"""Text normalization: the one definition of what a "word" is.

A document is normalized in three steps, always in this order:

1. Unicode NFKC, so that the same text typed differently (a precomposed or a decomposed "é",
   full-width "Ａ", the ligature "ﬁ") gives the same words;
2. lowercase, Unicode-aware (simple case mapping, code point by code point: "İ" becomes "i");
3. every run of characters that are not letters, combining marks or numbers (Unicode general
   categories L*, M*, N*) becomes one space, and leading and trailing spaces are removed.

Combining marks count as part of a word: without them a Devanagari or Thai word would fall apart at
every vowel sign. This is the seed's ``lc`` and ``tr/a-z0-9/ /c`` for every script.

The steps are Arrow compute kernels (utf8proc and RE2 tables), applied to one string here and to a
whole batch in :mod:`shingling.batch`: one implementation, so the library and the Spark job cannot
disagree on a character, whatever Unicode version the Python interpreter ships.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

#: A run of characters that are not part of a word (RE2 syntax).
NON_WORD_RUN = r"[^\p{L}\p{M}\p{N}]+"


def fold_array(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Steps 1 and 2 of normalization, NFKC then lowercase, on an Arrow string array.

    >>> fold_array(pa.array(["ＡBC ﬁ"])).to_pylist()
    ['abc fi']
    """
    return pc.utf8_lower(pc.utf8_normalize(texts, form="NFKC"))


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
