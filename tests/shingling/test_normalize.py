"""shingling.normalize: the one definition of a word, for every script."""

from __future__ import annotations

import re
import string

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from shingling.normalize import (
    _has_variation_selector,
    fold_array,
    normalize,
    normalize_array,
    words,
)

# every code point but surrogates, which a str may hold but UTF-8 (and so Arrow and Spark) cannot
UNICODE_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)))


def seed_normalize(text: str) -> str:
    """The seed's ``lc`` then ``tr/a-z0-9/ /c`` with runs squeezed and trimmed, for ASCII text."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


@settings(deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_normalizes_as_the_seed_did(text: str) -> None:
    assert normalize(text) == seed_normalize(text)


def test_lowercases_every_script() -> None:
    assert normalize("ÉCOLE Straße ΣΟΦΙΑ МОСКВА") == "école straße σοφια москва"


def test_punctuation_of_any_script_separates_words() -> None:
    assert words("«Guillemets» — dash、日本語。句読点！¿Qué?") == [
        "guillemets",
        "dash",
        "日本語",
        "句読点",
        "qué",
    ]


def test_combining_marks_stay_inside_words() -> None:
    # Devanagari vowel signs are combining marks (Mc/Mn): without them "हिन्दी" would split
    assert words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert words("cafe\u0301 ok") == ["café", "ok"]  # NFKC composes e + combining acute


def test_compatibility_forms_fold_to_the_same_words() -> None:
    assert words("Ｆｕｌｌ ﬁne ①") == words("full fine 1")


def test_digits_of_any_script_are_word_characters() -> None:
    assert words("a٣b 42") == ["a٣b", "42"]


def test_text_without_letters_or_digits_has_no_words() -> None:
    assert words(string.punctuation + " \t\n\u3000…") == []
    assert normalize("") == ""


def test_null_stays_null_in_a_batch() -> None:
    assert normalize_array(pa.array([None, "A,b"], type=pa.string())).to_pylist() == [None, "a b"]


@settings(deadline=None)
@given(UNICODE_TEXT)
def test_normalized_text_is_words_joined_by_single_spaces(text: str) -> None:
    normalized = normalize(text)
    assert normalized == normalized.strip(" ")
    assert "  " not in normalized
    assert " ".join(words(text)) == normalized
    assert all(w for w in words(text))


@settings(deadline=None)
@given(st.lists(UNICODE_TEXT, max_size=20))
def test_batch_and_single_normalization_agree(texts: list[str]) -> None:
    assert normalize_array(pa.array(texts, type=pa.string())).to_pylist() == [
        normalize(t) for t in texts
    ]


@settings(deadline=None)
@given(UNICODE_TEXT, UNICODE_TEXT)
def test_punctuation_between_texts_only_separates_words(a: str, b: str) -> None:
    assert words(a + " ,.;! " + b) == words(a) + words(b)


SELECTOR = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
# random text with selectors and their neighbours in UTF-8 (other 3-byte EF.. and 4-byte F0-F4..
# characters) much more often than chance would give them
NEAR_SELECTORS = st.lists(
    st.one_of(
        st.characters(exclude_categories=("Cs",)),
        st.sampled_from(
            [
                "\ufe00",
                "\ufe0f",
                "\ufe10",
                "\ufdff",
                "\uff01",
                "\U000e0100",
                "\U000e01ef",
                "\U000e01f0",
                "\U000e00ff",
                "\U0001f600",
                "\u2764",
            ]
        ),  # fmt: skip
    ),
).map("".join)


@settings(deadline=None)
@given(
    st.lists(st.one_of(st.none(), NEAR_SELECTORS), min_size=1, max_size=12),
    st.integers(0, 5),
)
def test_variation_selectors_are_found_in_the_strings_that_hold_them(texts, start) -> None:
    arr = pa.array(texts, type=pa.string()).slice(min(start, len(texts) - 1))
    expected = [t is not None and SELECTOR.search(t) is not None for t in arr.to_pylist()]
    assert _has_variation_selector(arr).tolist() == expected
    assert all(t is None or SELECTOR.search(t) is None for t in fold_array(arr).to_pylist())
