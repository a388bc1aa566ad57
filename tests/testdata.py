"""Test data shared by the test files: hypothesis strategies, and real text from the machine."""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import strategies as st

from shingling.hashing import text_hash, word_hash
from shingling.sketch import sketch, tokens

LICENSES = Path("/usr/share/common-licenses")
SAMPLE_CORPUS = Path(__file__).resolve().parents[1] / "data" / "sample" / "corpus.parquet"


@cache
def licence_texts() -> dict[str, str]:
    """The machine's common licences, one text per distinct file (symlinks dropped)."""
    return {
        p.name: p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(LICENSES.iterdir())
        if p.is_file() and not p.is_symlink()
    }


@cache
def licence_words() -> tuple[str, ...]:
    """Distinct whitespace-separated tokens of the licences, punctuation and case kept, in order."""
    tokens = re.findall(r"\S+", "\n".join(licence_texts().values()))
    return tuple(dict.fromkeys(tokens))


# every code point but surrogates: a Python str may hold them, UTF-8 (Arrow, Parquet, Spark) cannot
UNICODE_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)))
# a few real tokens, so that random documents share shingles; some are pure punctuation
REAL_WORD = st.sampled_from(
    licence_words()[:60] + ("Müller", "Łódź", "中文", "русский", "ﬁle", "—")
)
SEPARATOR = st.sampled_from([" ", "  ", ", ", ".\n", " — ", "\t", "!!", "、", "\u00a0", "\u2028"])
WORDY_TEXT = st.lists(
    st.tuples(st.one_of(REAL_WORD, REAL_WORD, UNICODE_TEXT), SEPARATOR), max_size=30
).map(lambda parts: "".join(word + sep for word, sep in parts))
PUNCTUATION_ONLY = st.text(alphabet=" .,;:!?-—()[]«»\n\t\u3000", max_size=10)
NON_EMPTY_DOCUMENT = st.one_of(WORDY_TEXT, UNICODE_TEXT)
# what a corpus's text column may hold: text of any script, short texts, empty, punctuation, null
DOCUMENT = st.one_of(WORDY_TEXT, WORDY_TEXT, UNICODE_TEXT, PUNCTUATION_ONLY, st.just(""), st.none())


@st.composite
def overlapping_pair(draw: st.DrawFn) -> tuple[str, str]:
    """Two texts that share a middle part (which may be empty), so their shingle sets overlap."""
    shared = draw(WORDY_TEXT)
    left, right = draw(WORDY_TEXT), draw(WORDY_TEXT)
    return left + " " + shared, shared + " " + right


def library_row(
    text: str | None, width: int, k: int, unit: str = "words", sample_mod: int = 0
) -> dict:
    """What a text's row of the documents table must hold, from the per-document library."""
    found = tokens(text, unit) if text is not None else []
    if not found:
        return {"n_words": 0, "n_shingles": 0, "sketch": None, "text_hash": None}
    s = sketch(text, width=width, k=k, unit=unit, sample_mod=sample_mod)
    return {
        "n_words": len(found),
        "n_shingles": s.n_shingles,
        "sketch": list(s.hashes),
        "text_hash": text_hash([word_hash(t) for t in found]),
    }


def light_edits(
    passage: list[str], rate: float, vocabulary: list[str], rng: random.Random
) -> list[str]:
    """Replace, delete or insert a word at about ``rate`` of the positions (at least one)."""
    out = list(passage)
    for _ in range(max(1, round(rate * len(passage)))):
        at, op = rng.randrange(len(out)), rng.choice("rdi")
        if op == "r":
            out[at] = rng.choice(vocabulary)
        elif op == "d":
            del out[at]
        else:
            out.insert(at, rng.choice(vocabulary))
    return out


@cache
def sample_corpus() -> tuple[tuple[str, str], ...]:
    """The bundled sample corpus as (doc_id, text) pairs."""
    table = pq.read_table(SAMPLE_CORPUS, columns=["doc_id", "text"])
    return tuple(zip(table["doc_id"].to_pylist(), table["text"].to_pylist(), strict=True))


@cache
def sample_corpus_rows(width: int = 4, k: int = 20) -> dict[str, dict]:
    """The library's row for every document of the sample corpus (computed once per test run)."""
    return {doc_id: library_row(text, width, k) for doc_id, text in sample_corpus()}
