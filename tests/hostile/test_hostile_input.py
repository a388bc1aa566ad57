"""One corpus of everything nobody cleaned, through the whole job with bounded memory.

The corpus holds a 50 MB document, 100,000 tiny documents (a million with
``SHINGLING_HOSTILE_FULL=1``, marked slow), invalid UTF-8 and a lone surrogate in the text column,
emoji and ZWJ sequences, right-to-left text and direction overrides, combining marks (decomposed
accents and stacked marks), a 1 MB word with no spaces, documents of only punctuation or only
digits, empty and null texts, null ids and duplicate ids. Every text is built from real text on the
machine (the sample corpus), except the few literal emoji, Hebrew and Arabic snippets.

The job runs as ``spark-submit`` in local mode with a small driver (the executor, in local mode)
heap and ``spark.executor.pyspark.memory`` set: that limit is enforced on the Python workers
(RLIMIT_AS), so a run that needed more memory for the 50 MB document would fail, not pass.

Each document must be sketched as the library sketches it, or carry a skip reason that names why,
and the run summary must account for every input row. Text columns of the wrong type, which
Parquet cannot mix with strings inside one column, are refused with a message naming them.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from testdata import library_row, sample_corpus

from shingling.normalize import normalize_array, words

REPO = Path(__file__).resolve().parents[2]
FULL = os.environ.get("SHINGLING_HOSTILE_FULL") == "1"
N_TINY = 100_000
WIDTH, K = 4, 20  # shingling/default.toml's sketch settings, which the job runs with here
BIG_BYTES = 50_000_000
LONG_WORD_BYTES = 1_000_000

# Memory the job may use: the JVM heap (in local mode the driver is the executor) and the Python
# workers' address space. Sketching the 50 MB document takes about 0.2 GB in Python above the
# worker's baseline (measured, peak RSS); the worker's own mappings (pyarrow, numba's compiled code)
# take most of the limit: the run passes with 2g and failed with 1600m, at worker start-up.
DRIVER_MEMORY = "1g"
PYSPARK_MEMORY = "2g"

# invalid UTF-8 put in the middle of a real sentence: a stray byte, a lone surrogate (CESU-8), an
# overlong "/", a truncated "€"
BAD_BYTES = {
    "utf8-stray-ff": b"\xff",
    "utf8-lone-surrogate": b"\xed\xa0\x80",
    "utf8-overlong": b"\xc0\xaf",
    "utf8-truncated": b"\xe2\x82",
}
# ZWJ sequences, a skin tone modifier, a flag; none with a variation selector (see the last test)
EMOJI = ["👨\u200d👩\u200d👧\u200d👦", "👩🏽\u200d🚒", "👍🏽", "🇫🇷", "🧑\u200d💻"]
HEBREW = "זהו מסמך קצר בעברית, עם מילים ומספרים 2024."
ARABIC = "هذه وثيقة قصيرة باللغة العربية، مع كلمات وأرقام ٢٠٢٤."


@dataclass
class Corpus:
    """The hostile corpus: its rows (text as raw bytes, so invalid UTF-8 fits) and what each is."""

    ids: list[str | None] = field(default_factory=list)
    texts: list[bytes | None] = field(default_factory=list)
    #: for the named special documents: the documents they must be exact duplicates of
    same_text: list[tuple[str, str]] = field(default_factory=list)

    def add(self, doc_id: str | None, text: str | bytes | None) -> None:
        self.ids.append(doc_id)
        self.texts.append(text.encode("utf-8") if isinstance(text, str) else text)

    def text(self, doc_id: str) -> bytes | None:
        return self.texts[self.ids.index(doc_id)]

    def write(self, path: Path, rows_per_file: int = 100_000) -> None:
        """Parquet files of (doc_id string, text string), the text bytes written unvalidated."""
        path.mkdir(parents=True)
        for n, start in enumerate(range(0, len(self.ids), rows_per_file)):
            ids = pa.array(self.ids[start : start + rows_per_file], pa.string())
            # binary viewed as string: same buffers, no UTF-8 check, as a careless writer does
            texts = pa.array(self.texts[start : start + rows_per_file], pa.binary()).view(
                pa.string()
            )
            pq.write_table(pa.table({"doc_id": ids, "text": texts}), path / f"part-{n:03d}.parquet")


def real_paragraphs() -> list[str]:
    """Paragraphs of the sample corpus with at least 40 words."""
    paragraphs = (p.strip() for _, t in sample_corpus() for p in re.split(r"\n\s*\n", t))
    return [p for p in paragraphs if len(p.split()) >= 40]


def with_separators(text: str, marks: list[str], every: int = 3) -> str:
    """``text`` with every ``every``-th space replaced by a space, a mark and a space."""
    parts = text.split(" ")
    out = [parts[0]]
    for i, part in enumerate(parts[1:], 1):
        out.append(f" {marks[i % len(marks)]} {part}" if i % every == 0 else f" {part}")
    return "".join(out)


def stacked_marks(text: str, per_letter: int = 4) -> str:
    """Every letter of ``text`` followed by ``per_letter`` combining diacritics (U+0300..U+036F)."""
    marks = [chr(c) for c in range(0x300, 0x370)]
    return "".join(
        ch + "".join(marks[(i + j) % len(marks)] for j in range(per_letter)) if ch.isalpha() else ch
        for i, ch in enumerate(text)
    )


def build_corpus(n_tiny: int, rng: random.Random) -> Corpus:
    paragraphs = real_paragraphs()
    corpus = Corpus()
    # a 50 MB document: real paragraphs drawn at random, as a dump of concatenated files is
    big, size = [], 0
    while size < BIG_BYTES:
        big.append(rng.choice(paragraphs))
        size += len(big[-1].encode()) + 2
    corpus.add("big-50mb", "\n\n".join(big))
    # a 1 MB "word": the letters of real text with everything between them removed
    letters = "".join(re.findall(r"[^\W\d_]+", "\n".join(t for _, t in sample_corpus())))
    corpus.add("long-word-1mb", letters.encode()[:LONG_WORD_BYTES].decode("utf-8", "ignore"))
    everything = "\n".join(paragraphs)
    punctuation = (c for c in everything if unicodedata.category(c)[0] in "PS")  # P*, S*: no words
    corpus.add("punctuation-only", "".join(punctuation)[:5000])
    corpus.add("digits-only", " ".join(re.findall(r"\d+", everything))[:5000])
    corpus.add("empty-text", "")
    corpus.add("blank-text", " \t\n\u00a0\u3000 ")
    corpus.add("null-text", None)
    corpus.add("emoji-only", " ".join(EMOJI * 20))
    corpus.add("rtl-hebrew", HEBREW)
    corpus.add("rtl-arabic", ARABIC)
    # copies that differ only in what normalization removes: they must be exact duplicates
    accented = [p for p in paragraphs if any(unicodedata.decomposition(c) for c in p)]
    originals = {
        "para-plain": paragraphs[0],
        "para-rtl": paragraphs[1],
        "para-accented": accented[0],
    }
    for doc_id, text in originals.items():
        corpus.add(doc_id, text)
    corpus.add("emoji-zwj-laced", with_separators(originals["para-plain"], EMOJI))
    corpus.add(
        "rtl-overrides", with_separators(originals["para-rtl"], ["\u202e", "\u200f", "\u2067"])
    )
    corpus.add("combining-decomposed", unicodedata.normalize("NFD", originals["para-accented"]))
    corpus.same_text += [
        ("emoji-zwj-laced", "para-plain"),
        ("rtl-overrides", "para-rtl"),
        ("combining-decomposed", "para-accented"),
    ]
    corpus.add("combining-stacked", stacked_marks(paragraphs[2]))
    sentence = paragraphs[3].encode()
    for doc_id, bad in BAD_BYTES.items():
        middle = sentence.index(b" ", len(sentence) // 2)
        corpus.add(doc_id, sentence[: middle - 2] + bad + sentence[middle - 2 :])
    # null ids, and ids that repeat (one of them a tiny document's)
    for p in paragraphs[4:7]:
        corpus.add(None, p)
    corpus.add("dup-id", paragraphs[7])
    corpus.add("dup-id", paragraphs[8])
    corpus.add("tiny-0000007", paragraphs[9])
    # tiny documents: one to four consecutive words of real text (often repeated, as in real dumps)
    stream = " ".join(paragraphs).split()
    for i in range(n_tiny):
        start = (2 * i) % (len(stream) - 4)
        corpus.add(f"tiny-{i:07d}", " ".join(stream[start : start + 1 + i % 4]))
    order = list(range(len(corpus.ids)))
    rng.shuffle(order)  # the special documents land in different files and batches
    corpus.ids = [corpus.ids[i] for i in order]
    corpus.texts = [corpus.texts[i] for i in order]
    return corpus


def run_job(corpus_dir: Path, output: Path) -> subprocess.CompletedProcess:
    """The job as spark-submit runs it in local mode, with small memory limits."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master", "local[2]",
        "--driver-memory", DRIVER_MEMORY,
        "--conf", f"spark.executor.pyspark.memory={PYSPARK_MEMORY}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=conf/log4j2.properties",
        str(REPO / "jobs" / "near_duplicates.py"),
        "--input", str(corpus_dir),
        "--output", str(output),
        # tiny documents repeat a lot (as in real dumps); groups of more than 10 copies are written
        # as members of their representative, which keeps the pair table at ~190k rows, not 1.8M
        "--set", "pairs.max_exact_group=10",
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=900)


def expected_row(text: bytes | None) -> dict:
    """The documents-table row the library gives for a text that is valid UTF-8."""
    return library_row(None if text is None else text.decode("utf-8"), WIDTH, K)


def check_run(corpus: Corpus, output: Path, result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, (
        f"the job failed:\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    )
    docs = pq.read_table(output / "documents").to_pylist()
    summary = json.loads((output / "summary.json").read_text())["documents"]

    # every input row is in the documents table once, and in the summary
    n = len(corpus.ids)
    assert len(docs) == n
    assert summary["read"] == n
    assert summary["sketched"] + sum(summary["skipped"].values()) == n
    reasons: dict[str | None, int] = {}
    for row in docs:
        reasons[row["skip_reason"]] = reasons.get(row["skip_reason"], 0) + 1
    assert reasons.pop(None, 0) == summary["sketched"]
    assert reasons == {r: c for r, c in summary["skipped"].items() if c}

    rows: dict[str | None, list[dict]] = {}
    for row in docs:
        rows.setdefault(row["doc_id"], []).append(row)
    assert sorted(rows, key=str) == sorted(set(corpus.ids), key=str)

    # null ids are refused by name; repeated ids are refused, every row of them
    assert [r["skip_reason"] for r in rows[None]] == ["null_id"] * corpus.ids.count(None)
    seen = Counter(i for i in corpus.ids if i is not None)
    repeated = {i for i, c in seen.items() if c > 1}
    for doc_id in repeated:
        assert [r["skip_reason"] for r in rows[doc_id]] == ["duplicate_id"] * seen[doc_id], doc_id
        assert all(r["sketch"] is None for r in rows[doc_id])

    def only(doc_id: str) -> dict:
        (row,) = rows[doc_id]
        return row

    # invalid UTF-8: refused by name, or read with each bad sequence replaced by U+FFFD
    for doc_id in BAD_BYTES:
        row, text = only(doc_id), corpus.text(doc_id)
        assert text is not None
        if row["skip_reason"] != "invalid_utf8":
            replaced = library_row(text.decode("utf-8", "replace"), WIDTH, K)
            assert {k: row[k] for k in replaced} == replaced, doc_id

    # the big document: every word counted, a full sketch (the library would take minutes here)
    big = only("big-50mb")
    big_text = corpus.text("big-50mb")
    assert big_text is not None
    assert big["skip_reason"] is None
    assert big["n_words"] == len(words(big_text.decode()))
    assert len(big["sketch"]) == K and big["sketch"] == sorted(big["sketch"])

    # every other named document exactly as the library sketches it (or skips it)
    special = [i for i in set(corpus.ids) if i and not i.startswith("tiny-") and i not in repeated]
    for doc_id in special:
        if doc_id in BAD_BYTES or doc_id == "big-50mb":
            continue
        row, want = only(doc_id), expected_row(corpus.text(doc_id))
        assert {k: row[k] for k in want} == want, doc_id
        reason = (
            "null_text" if corpus.text(doc_id) is None else None if want["sketch"] else "no_words"
        )
        assert row["skip_reason"] == reason, doc_id
    assert only("long-word-1mb")["n_words"] == 1
    assert only("punctuation-only")["skip_reason"] == "no_words"
    assert only("digits-only")["skip_reason"] is None
    assert only("emoji-only")["skip_reason"] == "no_words"

    # tiny documents: word counts of all of them, the library's sketch for a sample
    tiny = [
        (i, t) for i, t in zip(corpus.ids, corpus.texts, strict=True) if i and i.startswith("tiny-")
    ]
    tiny = [(i, t) for i, t in tiny if i not in repeated]
    normalized = normalize_array(pa.array([t.decode() for _, t in tiny]))
    counts = pc.fill_null(
        pc.list_value_length(
            pc.split_pattern(pc.if_else(pc.equal(normalized, ""), None, normalized), " ")
        ),
        0,
    )
    assert [only(i)["n_words"] for i, _ in tiny] == counts.to_pylist()
    for doc_id, text in random.Random(8).sample(tiny, 300):
        want = expected_row(text)
        assert {k: only(doc_id)[k] for k in want} == want, doc_id

    # copies that differ only by emoji, direction marks or decomposition are exact duplicates
    pairs = pq.read_table(output / "pairs").to_pylist()
    exact = {(p["doc_a"], p["doc_b"]) for p in pairs if p["exact_duplicate"]}
    for a, b in corpus.same_text:
        assert (min(a, b), max(a, b)) in exact, (a, b)


@pytest.fixture(scope="module")
def hostile_run(
    tmp_path_factory: pytest.TempPathFactory, jvm: None
) -> tuple[Corpus, Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("hostile")
    corpus = build_corpus(N_TINY, random.Random(8))
    corpus.write(root / "corpus")
    return corpus, root / "out", run_job(root / "corpus", root / "out")


@pytest.mark.e2e
def test_every_hostile_document_is_sketched_or_refused_by_name(hostile_run) -> None:
    check_run(*hostile_run)


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="a million tiny documents: set SHINGLING_HOSTILE_FULL=1")
def test_a_million_tiny_documents(tmp_path: Path) -> None:
    corpus = build_corpus(1_000_000, random.Random(9))
    corpus.write(tmp_path / "corpus")
    check_run(corpus, tmp_path / "out", run_job(tmp_path / "corpus", tmp_path / "out"))


def test_variation_selectors_alone_are_not_words() -> None:
    # the emoji presentation selector is a combining mark attached to a symbol; once the symbol
    # becomes a separator, it must not stand alone as a word ("I ❤️ it" is "i it")
    assert words("I \u2764\ufe0f it") == words("I \u2764 it") == ["i", "it"]


def _write(path: Path, text: pa.Array) -> Path:
    ids = pa.array([f"doc-{i}" for i in range(len(text))])
    pq.write_table(pa.table({"doc_id": ids, "text": text}), path)
    return path


@pytest.mark.parametrize(("arrow_type", "shown"), [(pa.int64(), "bigint"), (pa.binary(), "binary")])
def test_text_of_the_wrong_type_is_refused_naming_the_column(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture, arrow_type: pa.DataType, shown: str
) -> None:
    from shingling.spark.jobs.near_duplicates import main

    values = [7, 8] if arrow_type == pa.int64() else [t.encode() for _, t in sample_corpus()[:2]]
    corpus = _write(tmp_path / "corpus.parquet", pa.array(values, arrow_type))
    assert main(["--input", str(corpus), "--output", str(tmp_path / "out")]) == 3
    assert f"the text column 'text' is {shown}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_file_whose_text_has_the_wrong_type_is_refused_naming_the_file(
    spark, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from shingling.spark.jobs.near_duplicates import main

    (tmp_path / "corpus").mkdir()
    _write(tmp_path / "corpus" / "part-0.parquet", pa.array([t for _, t in sample_corpus()[:2]]))
    _write(tmp_path / "corpus" / "part-1.parquet", pa.array([7, 8], pa.int64()))
    code = main(["--input", str(tmp_path / "corpus"), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 3, err[-3000:]
    assert "part-1.parquet" in err
    assert not (tmp_path / "out").exists()
