"""Character shingles (unit = "chars") on real text of scripts written without spaces.

Real text from the machine: the UTF-8 samples of Python's CJK codec tests (Chinese, Japanese,
Korean) and the translations of the gettext catalogs under /usr/share/locale (Simplified Chinese,
Japanese, Thai), read with struct from the .mo format. A word shingler sees a Chinese or Thai
paragraph as a few giant "words" (runs between punctuation and spaces), so one edited character
breaks a whole word and every shingle over it; character shingles lose only the few around it.
"""

from __future__ import annotations

import random
import re
import struct
from functools import cache
from pathlib import Path

import pytest

from shingling.estimators import jaccard
from shingling.normalize import normalize, words
from shingling.sketch import shingle_hashes, sketch, tokens

CJK_SAMPLES = Path(__file__).resolve().parents[1] / "data" / "cjk"  # CPython's, bundled
LOCALES = Path("/usr/share/locale")
# the job's default cut (shingling/default.toml, pairs.threshold) and the width the docs advise for chars
THRESHOLD = 0.6
CHAR_WIDTH = 5
# letters of the script each locale is written in (Latin placeholders and commands excluded)
SCRIPTS = {
    "zh_CN": r"[\u4e00-\u9fff]",
    "ja": r"[\u3040-\u30ff\u4e00-\u9fff]",
    "th": r"[\u0e00-\u0e7f]",
}


def mo_messages(path: Path) -> list[tuple[str, str]]:
    """(msgid, msgstr) of a compiled gettext catalog; no header, plurals cut to their first form."""
    data = path.read_bytes()
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _, n, originals, translations = struct.unpack(order + "4I", data[4:20])
    out = []
    for i in range(n):
        length, offset = struct.unpack(
            order + "2I", data[originals + 8 * i : originals + 8 * i + 8]
        )
        msgid = data[offset : offset + length].decode("utf-8", "replace").split("\0")[0]
        length, offset = struct.unpack(
            order + "2I", data[translations + 8 * i : translations + 8 * i + 8]
        )
        msgstr = data[offset : offset + length].decode("utf-8", "replace").split("\0")[0]
        if msgid and msgstr:
            out.append((msgid, msgstr))
    return out


@cache
def translations(locale: str) -> tuple[tuple[str, str], ...]:
    """Distinct (msgid, msgstr) pairs of a locale's catalogs whose msgstr is written in its script
    only (no Latin letters) and holds at least 15 of its letters."""
    catalogs = sorted((LOCALES / locale / "LC_MESSAGES").glob("*.mo"))
    if not catalogs:
        pytest.skip(f"no gettext catalogs for {locale} on this machine")
    seen: dict[str, str] = {}
    for path in catalogs:
        for msgid, msgstr in mo_messages(path):
            if not re.search("[A-Za-z]", msgstr) and len(re.findall(SCRIPTS[locale], msgstr)) >= 15:
                seen.setdefault(msgstr, msgid)
    return tuple((msgid, msgstr) for msgstr, msgid in seen.items())


def paragraph(locale: str, n_messages: int, seed: int) -> tuple[str, str]:
    """A paragraph of ``n_messages`` translations drawn with ``seed``, and their English msgids."""
    chosen = random.Random(seed).sample(translations(locale), n_messages)
    return " ".join(msgstr for _, msgstr in chosen), " ".join(msgid for msgid, _ in chosen)


@cache
def cjk_sample(encoding: str) -> str:
    path = CJK_SAMPLES / f"{encoding}-utf8.txt"
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    return path.read_text(encoding="utf-8")


def edit_characters(text: str, n_edits: int, seed: int) -> str:
    """Replace, delete or insert a character (one of the text's own) at ``n_edits`` places."""
    rng = random.Random(seed)
    chars = list(text)
    for _ in range(n_edits):
        at, op = rng.randrange(len(chars)), rng.choice("rdi")
        if op == "r":
            chars[at] = rng.choice(text)
        elif op == "d":
            del chars[at]
        else:
            chars.insert(at, rng.choice(text))
    return "".join(chars)


def exact_jaccard(a: str, b: str, unit: str, width: int) -> float:
    sa, sb = (
        set(shingle_hashes(tokens(a, unit), width)),
        set(shingle_hashes(tokens(b, unit), width)),
    )
    return len(sa & sb) / len(sa | sb)


# --- what a word shingler sees --------------------------------------------------------------------


@pytest.mark.parametrize("locale", sorted(SCRIPTS))
def test_a_word_shingler_sees_few_giant_words_in_scripts_without_spaces(locale: str) -> None:
    text, english = paragraph(locale, 60, seed=1)
    n_words, n_english = len(words(text)), len(words(english))
    letters = len(re.findall(SCRIPTS[locale], text))
    # the same messages in English have several times more words ...
    assert n_words * 2 < n_english, (n_words, n_english)
    # ... and a "word" of these scripts is a whole phrase, not 1-3 characters
    assert letters / n_words >= 6, letters / n_words


def test_cjk_codec_samples_are_phrases_to_the_word_splitter() -> None:
    for encoding in ("gb2312", "euc_jp"):
        text = cjk_sample(encoding)
        found = words(text)
        longest = max(found, key=len)
        assert len(longest) >= 15, longest  # a whole clause between two punctuation marks
        assert tokens(text, "chars") == list(normalize(text))


# --- what character shingles find ----------------------------------------------------------------


@pytest.mark.parametrize("locale", sorted(SCRIPTS))
def test_char_shingles_find_a_lightly_edited_copy_that_word_shingles_miss(locale: str) -> None:
    text, _ = paragraph(locale, 40, seed=2)
    # one character in 80 edited: about a typo per line of text
    edited = edit_characters(text, len(text) // 80, seed=3)
    by_words = exact_jaccard(text, edited, "words", 4)
    by_chars = exact_jaccard(text, edited, "chars", CHAR_WIDTH)
    assert by_chars >= 0.85 and by_words < THRESHOLD, (by_chars, by_words)
    # what the job decides from the sketches, at its default cut
    chars_estimate = jaccard(
        sketch(text, unit="chars", width=CHAR_WIDTH), sketch(edited, unit="chars", width=CHAR_WIDTH)
    )
    assert chars_estimate >= THRESHOLD > by_words


@pytest.mark.parametrize("encoding", ["gb2312", "big5", "euc_jp", "shift_jis"])
def test_char_shingles_find_an_edited_copy_of_the_codec_samples(encoding: str) -> None:
    text = cjk_sample(encoding)
    edited = edit_characters(text, len(text) // 150, seed=4)
    assert exact_jaccard(text, edited, "chars", CHAR_WIDTH) >= 0.8
    assert exact_jaccard(text, edited, "chars", CHAR_WIDTH) > exact_jaccard(
        text, edited, "words", 4
    )


# the narrowest char width at which unrelated paragraphs share under 10% of their shingles: a Thai
# syllable is two or three code points (consonant, vowel and tone marks), a Chinese one is one
SAFE_WIDTH = {"zh_CN": 4, "ja": 4, "th": 6}


@pytest.mark.parametrize("locale", sorted(SCRIPTS))
def test_unrelated_paragraphs_share_few_char_shingles_once_width_is_wide_enough(
    locale: str,
) -> None:
    # two paragraphs of different messages of the same catalogs: they share the script's common
    # words and UI phrases, which narrow char shingles mistake for resemblance
    messages = list(translations(locale))
    random.Random(5).shuffle(messages)
    a = " ".join(m for _, m in messages[:40])
    b = " ".join(m for _, m in messages[40:80])
    by_width = [exact_jaccard(a, b, "chars", width) for width in range(1, 8)]
    assert by_width == sorted(by_width, reverse=True), by_width
    assert by_width[0] > 0.25  # single characters: unrelated texts look alike
    assert max(by_width[SAFE_WIDTH[locale] - 1 :]) < 0.1, by_width
    assert by_width[SAFE_WIDTH[locale] - 2] >= 0.01, by_width  # and narrower is not as safe


def test_char_shingles_cross_spaces_and_punctuation_as_one_space() -> None:
    # NFKC folds the full-width forms of the CJK samples; punctuation runs become one space
    text = cjk_sample("gb2312")
    chars = tokens(text, "chars")
    assert "，" not in chars and "。" not in chars and "  " not in "".join(chars)
    assert sketch(text, unit="chars").n_shingles == len(set(shingle_hashes(chars, 4)))
    assert sketch(text.replace("，", " , "), unit="chars", width=4) == sketch(
        text, unit="chars", width=4
    )
