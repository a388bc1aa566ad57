"""shingling.fast.sketch: sketching a whole Arrow batch gives exactly the per-document sketches."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import (
    DOCUMENT,
    library_row,
    licence_texts,
    sample_corpus,
)

from shingling.fast.sketch import sketch_batch
from shingling.fast.text import SET_SIZE
from shingling.normalize import words


def expected_rows(
    texts: list[str | None], width: int, k: int, unit: str = "words", sample_mod: int = 0
) -> list[dict]:
    return [library_row(text, width, k, unit, sample_mod) for text in texts]


def batch_rows(
    texts: pa.Array | pa.ChunkedArray, width: int, k: int, unit: str = "words", sample_mod: int = 0
) -> list[dict]:
    out = sketch_batch(texts, width=width, k=k, unit=unit, sample_mod=sample_mod)
    assert (
        len(out.n_words)
        == len(out.n_shingles)
        == len(out.sketch)
        == len(out.text_hash)
        == len(texts)
    )
    return [
        {"n_words": int(w), "n_shingles": int(n), "sketch": s, "text_hash": h}
        for w, n, s, h in zip(
            out.n_words,
            out.n_shingles,
            out.sketch.to_pylist(),
            out.text_hash.to_pylist(),
            strict=True,
        )
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(DOCUMENT, max_size=25),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=30),
)
def test_batch_equals_per_document_sketches(texts: list[str | None], width: int, k: int) -> None:
    assert batch_rows(pa.array(texts, type=pa.string()), width, k) == expected_rows(texts, width, k)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(DOCUMENT, max_size=25),
    st.sampled_from(["words", "chars"]),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=30),
    st.sampled_from([1, 2, 3, 16]),
)
def test_batch_equals_per_document_sketches_in_every_mode(
    texts: list[str | None], unit: str, width: int, k: int, sample_mod: int
) -> None:
    # sample_mod 1 keeps every shingle hash, up to the largest int64
    array = pa.array(texts, type=pa.string())
    got = batch_rows(array, width, k, unit, sample_mod)
    assert got == expected_rows(texts, width, k, unit, sample_mod)


@settings(max_examples=30, deadline=None)
@given(st.lists(DOCUMENT, min_size=2, max_size=25), st.data())
def test_sliced_chunked_and_large_string_input_give_the_same(
    texts: list[str | None], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(min_value=1, max_value=len(texts) - 1))
    expected = expected_rows(texts, 4, 20)
    array = pa.array(["padding"] + texts, type=pa.large_string()).slice(
        1
    )  # an offset into the buffers
    assert batch_rows(array, 4, 20) == expected
    chunked = pa.chunked_array(
        [pa.array(texts[:cut], pa.string()), pa.array(texts[cut:], pa.string())]
    )
    assert batch_rows(chunked, 4, 20) == expected


def test_null_slots_that_own_bytes_are_still_null() -> None:
    # Arrow may leave a null slot's bytes in the data buffer; they are not words
    texts = pa.array(["GNU General Public License", "hidden words here", "version 3"])
    masked = pa.Array.from_buffers(
        pa.string(), 3, [pa.array([True, False, True]).buffers()[1], *texts.buffers()[1:]]
    )
    assert masked.to_pylist() == ["GNU General Public License", None, "version 3"]
    assert batch_rows(masked, 4, 20) == expected_rows(masked.to_pylist(), 4, 20)


def test_short_documents_have_one_shingle_of_all_their_words() -> None:
    texts = [
        "GNU",
        "GNU General",
        "GNU General Public",
        "GNU General Public License",
        "...",
        None,
        "",
    ]
    rows = batch_rows(pa.array(texts), 4, 20)
    assert [r["n_shingles"] for r in rows] == [1, 1, 1, 1, 0, 0, 0]
    assert [r["n_words"] for r in rows] == [1, 2, 3, 4, 0, 0, 0]
    assert rows == expected_rows(texts, 4, 20)


def test_same_words_same_text_hash() -> None:
    text = licence_texts()["BSD"]
    rows = batch_rows(pa.array([text, text.upper().replace(",", " ; "), text + " extra"]), 4, 20)
    assert rows[0]["text_hash"] == rows[1]["text_hash"] != rows[2]["text_hash"]


def test_empty_batch() -> None:
    assert batch_rows(pa.array([], type=pa.string()), 4, 20) == []


@pytest.mark.parametrize(("width", "k"), [(0, 20), (4, 0)])
def test_width_or_k_below_one_is_refused(width: int, k: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        sketch_batch(pa.array(["a b"]), width=width, k=k)


def test_real_corpus_batch_equals_per_document_sketches() -> None:
    # a third of the sample corpus (the reference is slow); the Spark tier's parity test takes all
    _, texts = zip(*sample_corpus()[::3], strict=True)
    assert batch_rows(pa.array(texts), 4, 20) == expected_rows(list(texts), 4, 20)


@pytest.mark.parametrize(("width", "k"), [(4, 20), (1, 5), (7, 64), (2, 1)])
def test_real_licences_batch_equals_per_document_sketches(width: int, k: int) -> None:
    texts = list(licence_texts().values())
    assert batch_rows(pa.array(texts), width, k) == expected_rows(texts, width, k)


@pytest.mark.parametrize("sample_mod", [0, 8])
def test_texts_around_the_hash_set_size_equal_the_library(sample_mod: int) -> None:
    # up to SET_SIZE // 2 shingles a text's distinct ones are found with a hash set, beyond by
    # sorting: both sides of the boundary, with real words and their repeats
    running = words(" ".join(licence_texts().values()))  # the licences' words, in order
    limit = SET_SIZE // 2
    sizes = [limit - 1, limit, limit + 1, limit + 2, 3 * limit]
    assert len(running) > max(sizes) + 3
    texts = [" ".join(running[: n + 3]) for n in sizes]
    rows = batch_rows(pa.array(texts), 4, 20, sample_mod=sample_mod)
    assert [r["n_words"] - 3 for r in rows] == sizes
    assert rows == expected_rows(texts, 4, 20, sample_mod=sample_mod)
