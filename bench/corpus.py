"""A deterministic benchmark corpus of real sentences, with planted near-duplicates.

    python -m bench.corpus --docs 10000 [--seed 42] [--no-skew] [--dense]   prints its directory

Base text: distinct real sentences taken from text this machine ships (Python docstrings and docs,
Debian package docs and copyright files, the common licenses, Perl POD; see :data:`SOURCES`). A base
document is a few paragraphs of sentences drawn uniformly from that pool, so two unrelated documents
share almost no 4-word shingle. Then, deterministically from the seed:

- **families** (30% of the documents): a source and two variants, each variant one of: word
  substitutions, insertions, deletions or a mix of them at a known rate; paragraphs or sentences
  reordered; an exact copy; or (in a family of a long source) an excerpt of 30-95% of it. Every
  pair within a family is a planted pair.
- **skew** (on by default, ``--no-skew`` for the clean corpus): one page copied into 5% of the
  documents, and one boilerplate paragraph inserted into 10% of the others. The clean corpus is the
  same corpus without them (the hot page's slots hold ordinary documents), so the two cost the same
  apart from the skew.

Written as Parquet (doc_id int64, text string) in several files under ``bench/work/``, cached by
parameters; ``planted.parquet`` lists the planted pairs and ``meta.json`` what was made.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import xxhash

VERSION = 2
WORK = Path(__file__).resolve().parent / "work"

#: Where the base sentences come from: (root, file patterns). Missing roots are skipped; the pool
#: size and digest are recorded with every corpus, since another machine ships other text.
SOURCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("/usr/share/common-licenses", ("*",)),
    ("/usr/share/doc", ("*",)),
    ("/usr/share/perl", ("*.pod", "*.pm")),
    ("/usr/share/perl5", ("*.pod", "*.pm")),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11", ("*.py", "*.rst", "*.txt")),
    ("/usr/lib/python3", ("*.py",)),
    ("/usr/lib/google-cloud-sdk", ("*.py", "*.md", "*.txt")),
    ("/usr/lib/node_modules", ("*.md",)),
    (
        str(Path(__file__).resolve().parents[1] / ".venv/lib/python3.11/site-packages"),
        ("*.py", "*.rst", "*.txt", "*.md"),
    ),
)

# base documents; with the long excerpt sources and the boilerplate the mean is about 1.4 KB, as
# in the 100k-document corpus of MEASURED.md (138 MB)
MEAN_DOC_BYTES = 1300
FAMILY_SHARE = 0.10  # sources; with two variants each, 30% of the documents are in a family
HOT_SHARE = 0.05  # copies of the one hot page, when skewed
BOILERPLATE_SHARE = 0.10  # documents holding the shared boilerplate paragraph, when skewed
EXCERPT_FAMILY_SHARE = 0.125  # families whose variants are excerpts of a long source
# The pair-denser recipe (``--dense``): a fifth of the documents in planted pairs (a source and one
# variant) whose Jaccard is spread evenly over 0.3 to 1.0, and a boilerplate paragraph in a few
# percent of the documents (no hot page): the similarities of real corpora, not far from any cut.
DENSE_FAMILY_SHARE = 0.10
DENSE_BOILERPLATE_SHARE = 0.03
DENSE_JACCARD = (0.3, 1.0)
# The recipe built to hurt (``--hostile``, issue 37): documents composed from a fixed pool of reused
# paragraphs (so the postings of their hashes grow with the corpus, as reused text does in real
# collections), boilerplate blocks each shared by a few thousand documents (just under and just
# over pairs.max_posting, 2000), a template around a tenth of the documents, and 1% of the
# documents in families of thousands of near copies.
HOSTILE_PARAGRAPHS = 5_000  # the reused paragraphs, whatever the corpus size
HOSTILE_REUSED = 0.5  # the chance that a paragraph of a document is a reused one
HOSTILE_BLOCKS = (1_900, 2_100, 3_000, 5_000)  # documents sharing each boilerplate block
HOSTILE_TEMPLATE_SHARE = 0.10
HOSTILE_FAMILY_SHARE = 0.01
HOSTILE_FAMILY_SIZE = 2_500
HOSTILE_FAMILY_RATES = (0.002, 0.005, 0.01, 0.02)  # word substitution rates of the near copies
HOSTILE_PLANTED = 20_000  # family pairs listed in planted.parquet (a sample: there are millions)
WORD_EDITS = ("substitute", "insert", "delete", "mixed")
VARIANT_KINDS = (*WORD_EDITS, "reorder_paragraphs", "reorder_sentences", "exact")
#: Word edit rates: a substitution rate r leaves a Jaccard of about (1-r)^4 / (2 - (1-r)^4),
#: so these span about 0.96 down to 0.25.
EDIT_RATES = (0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)

_DOCSTRING = re.compile(r'"""(.*?)"""', re.S)
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# markup, code and addresses: a sentence with any of these is not prose
_NOT_PROSE = re.compile(r"[<>{}=_\\|*#`\[\]~^$@]|::|\.\.|https?:|\w\.\w|\(\)|--")
_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class CorpusSpec:
    """What to generate; every field is part of the cache key."""

    docs: int
    seed: int = 42
    skew: bool = True
    dense: bool = False  # the pair-denser recipe (see DENSE_FAMILY_SHARE)
    hostile: bool = False  # the recipe built to hurt (see HOSTILE_PARAGRAPHS)

    @property
    def key(self) -> str:
        kind = "skew" if self.skew else "clean"
        recipe = "-dense" if self.dense else "-hostile" if self.hostile else ""
        return f"corpus-v{VERSION}-n{self.docs}-s{self.seed}-{kind}{recipe}"

    @property
    def files(self) -> int:
        """Parquet files to write: several, so Spark reads in parallel from the start."""
        return max(2, min(16, self.docs // 50_000))


@dataclass(frozen=True)
class Corpus:
    """A generated corpus on disk."""

    path: Path  # directory of Parquet files (doc_id, text)
    planted: Path  # planted pairs: doc_a < doc_b, relation, family
    meta: dict

    @property
    def text_bytes(self) -> int:
        return int(self.meta["text_bytes"])


# --- the sentence pool ------------------------------------------------------------------------


def source_files() -> list[Path]:
    """Every readable file under :data:`SOURCES`, sorted so the pool is the same on every run."""
    found: set[Path] = set()
    for root, patterns in SOURCES:
        base = Path(root)
        if base.is_dir():
            for pattern in patterns:
                found.update(p for p in base.rglob(pattern) if p.is_file())
    return sorted(found)


def _read_text(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        if b"\0" in raw[:4096]:
            return None
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def prose_sentences(text: str) -> Iterator[str]:
    """The prose sentences of a text: whitespace collapsed, 5 to 60 words, no markup or code.

    >>> list(prose_sentences("It is x == 1.\\n\\nThe value is positive in each case."))
    ['The value is positive in each case.']
    """
    for paragraph in _PARAGRAPH.split(text):
        for sentence in _SENTENCE_END.split(" ".join(paragraph.split())):
            if not 30 <= len(sentence) <= 400 or not sentence[0].isupper():
                continue
            if sentence[-1] not in ".!?" or _NOT_PROSE.search(sentence):
                continue
            if 5 <= sentence.count(" ") + 1 <= 60:
                yield sentence


def build_pool(files: list[Path] | None = None) -> list[str]:
    """Distinct prose sentences (distinct by lowercased words) from the machine's shipped text."""
    seen: set[str] = set()
    pool: list[str] = []
    for path in source_files() if files is None else files:
        text = _read_text(path)
        if text is None:
            continue
        chunks = _DOCSTRING.findall(text) if path.suffix == ".py" else [text]
        for chunk in chunks:
            for sentence in prose_sentences(chunk):
                key = " ".join(_WORDS.findall(sentence.lower()))
                if key not in seen:
                    seen.add(key)
                    pool.append(sentence)
    return pool


def load_pool(work: Path = WORK) -> list[str]:
    """The sentence pool, built once and cached under ``work``."""
    cached = work / f"pool-v{VERSION}.parquet"
    if not cached.exists():
        work.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        pq.write_table(pa.table({"sentence": build_pool()}), tmp)
        tmp.rename(cached)
    return pq.read_table(cached).column("sentence").to_pylist()


def pool_digest(pool: list[str]) -> str:
    """A short fingerprint of the pool, recorded with every corpus made from it."""
    h = xxhash.xxh64()
    for sentence in pool:
        h.update(sentence.encode("utf-8") + b"\n")
    return h.hexdigest()


# --- documents ----------------------------------------------------------------------------------

Paragraphs = list[list[str]]  # a document before rendering: paragraphs of sentences


class Generator:
    """Draws documents and edits from one seeded random stream per concern."""

    def __init__(self, pool: list[str], seed: int) -> None:
        self.pool = pool
        self.rng = np.random.default_rng([seed, 1])
        mean_sentence = float(np.mean([len(s) + 1 for s in pool[:: max(1, len(pool) // 20_000)]]))
        self.mean_sentences = MEAN_DOC_BYTES / mean_sentence
        vocab_rng = np.random.default_rng([seed, 2])
        sample = vocab_rng.choice(len(pool), size=min(len(pool), 20_000), replace=False)
        self.vocab = sorted({w for i in sample for w in pool[i].split()})

    def base(self, scale: float = 1.0) -> Paragraphs:
        """A fresh document: sentences drawn uniformly from the pool, in paragraphs of 1-6."""
        n = max(2, int(round(self.rng.lognormal(np.log(self.mean_sentences * scale) - 0.08, 0.4))))
        picks = self.rng.integers(0, len(self.pool), size=n)
        sizes = self.rng.integers(1, 7, size=n)
        paragraphs, i = [], 0
        for size in sizes:
            if i >= n:
                break
            paragraphs.append([self.pool[j] for j in picks[i : i + size]])
            i += size
        return paragraphs

    def word_edit(self, doc: Paragraphs, kind: str, rate: float) -> str:
        """The document with words substituted, inserted and/or deleted, each word at ``rate``."""
        rates = {"substitute": (rate, 0, 0), "insert": (0, rate, 0), "delete": (0, 0, rate)}.get(
            kind, (rate / 3, rate / 3, rate / 3)
        )
        out = []
        for paragraph in doc:
            words = " ".join(paragraph).split(" ")
            draw = self.rng.random((3, len(words)))
            new: list[str] = []
            for i, word in enumerate(words):
                if draw[1, i] < rates[1]:
                    new.append(self.random_word())
                if draw[2, i] < rates[2]:
                    continue
                new.append(self.random_word() if draw[0, i] < rates[0] else word)
            out.append(" ".join(new))
        return "\n\n".join(out)

    def random_word(self) -> str:
        return self.vocab[int(self.rng.integers(len(self.vocab)))]

    def variant(self, doc: Paragraphs, kind: str, rate: float) -> str:
        """One planted variant of a document (rendered)."""
        if kind in WORD_EDITS:
            return self.word_edit(doc, kind, rate)
        if kind == "reorder_paragraphs" and len(doc) > 1:
            return render([doc[i] for i in self.rng.permutation(len(doc))])
        if kind in ("reorder_paragraphs", "reorder_sentences"):
            sentences = [s for p in doc for s in p]
            shuffled = [sentences[i] for i in self.rng.permutation(len(sentences))]
            return render([shuffled[i : i + 3] for i in range(0, len(shuffled), 3)])
        if kind == "exact":
            return render(doc)
        raise ValueError(f"unknown variant kind {kind!r}")

    def excerpt(self, doc: Paragraphs, share: float) -> str:
        """A contiguous run of about ``share`` of the document's sentences."""
        sentences = [s for p in doc for s in p]
        n = max(1, int(round(share * len(sentences))))
        start = int(self.rng.integers(0, len(sentences) - n + 1))
        part = sentences[start : start + n]
        return render([part[i : i + 4] for i in range(0, len(part), 4)])


def render(doc: Paragraphs) -> str:
    """A document's text: sentences joined by a space, paragraphs by a blank line.

    >>> render([["One.", "Two."], ["Three."]])
    'One. Two.\\n\\nThree.'
    """
    return "\n\n".join(" ".join(p) for p in doc)


def with_paragraph(text: str, paragraph: str, rng: np.random.Generator) -> str:
    """The text with one more paragraph, inserted between two of its paragraphs at random."""
    parts = text.split("\n\n")
    at = int(rng.integers(0, len(parts) + 1))
    return "\n\n".join([*parts[:at], paragraph, *parts[at:]])


def corpus_table(texts: list[str], doc_id: np.ndarray) -> pa.Table:
    """(doc_id, text) in doc_id order, the text of slot i under ``doc_id[i]``."""
    order = np.argsort(doc_id)
    text_array = pa.array(texts, type=pa.large_string()).take(pa.array(order))
    return pa.table({"doc_id": pa.array(doc_id[order]), "text": text_array.cast(pa.string())})


def described(spec: CorpusSpec, pool: list[str], texts: list[str]) -> dict:
    """What every corpus's meta.json says first: its spec, pool and size."""
    lengths = np.array([len(t.encode("utf-8")) for t in texts])
    return {
        "spec": asdict(spec),
        "version": VERSION,
        "pool_sentences": len(pool),
        "pool_digest": pool_digest(pool),
        "documents": len(texts),
        "text_bytes": int(lengths.sum()),
        "mean_doc_bytes": round(float(lengths.mean()), 1),
    }


def generate(
    spec: CorpusSpec, pool: list[str], *, skew_seed: int | None = None
) -> tuple[pa.Table, pa.Table, dict]:
    """The corpus (doc_id, text) in doc_id order, the planted pairs, and what was made.

    ``skew_seed`` (default: the spec's seed) chooses the hot page and the boilerplate paragraph:
    the shards of a large corpus (:func:`build`) share them.
    """
    n = spec.docs
    skew_seed = spec.seed if skew_seed is None else skew_seed
    gen = Generator(pool, spec.seed)
    n_families = int(n * FAMILY_SHARE)
    texts: list[str] = []
    pair_slots: list[tuple[int, int, str, int]] = []
    variant_kinds: dict[str, int] = {}
    if spec.dense:
        n_families = int(n * DENSE_FAMILY_SHARE)
    for family in range(n_families):
        first = len(texts)
        if spec.dense:
            source = gen.base()
            # a substitution rate r leaves J = x / (2 - x) with x = (1 - r)^4: r for a J drawn
            target = gen.rng.uniform(*DENSE_JACCARD)
            rate = 1.0 - (2.0 * target / (1.0 + target)) ** 0.25
            labels = [f"substitute({rate:.3f})"]
            members = [render(source), gen.variant(source, "substitute", rate)]
        elif gen.rng.random() < EXCERPT_FAMILY_SHARE:
            source = gen.base(scale=3.0)
            shares = gen.rng.uniform(0.3, 0.95, size=2)
            labels = [f"excerpt({s:.2f})" for s in shares]
            members = [render(source), *(gen.excerpt(source, s) for s in shares)]
        else:
            source = gen.base()
            kinds = gen.rng.choice(VARIANT_KINDS, size=2)
            rates = gen.rng.choice(EDIT_RATES, size=2)
            labels = [
                f"{k}({r})" if k in WORD_EDITS else str(k)
                for k, r in zip(kinds, rates, strict=True)
            ]
            members = [
                render(source),
                *(gen.variant(source, k, r) for k, r in zip(kinds, rates, strict=True)),
            ]
        texts.extend(members)
        names = ["source", *labels]
        for label in labels:
            variant_kinds[label.split("(")[0]] = variant_kinds.get(label.split("(")[0], 0) + 1
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                pair_slots.append((first + i, first + j, f"{names[i]}~{names[j]}", family))
    n_fillers = n - len(texts)
    texts.extend(render(gen.base()) for _ in range(n_fillers))

    # Skew draws from its own streams, so the clean corpus is the skewed one without the skew.
    skew_rng = np.random.default_rng([spec.seed, 3])
    hot_page = render(Generator(pool, skew_seed + 1).base())
    drawn = skew_rng.integers(0, len(pool), size=4)  # drawn either way: the stream stays aligned
    if skew_seed != spec.seed:
        drawn = np.random.default_rng([skew_seed, 3]).integers(0, len(pool), size=4)
    boilerplate = " ".join(pool[i] for i in drawn)
    n_hot = int(round(n * HOT_SHARE)) if spec.skew and not spec.dense else 0
    boiler_share = DENSE_BOILERPLATE_SHARE if spec.dense else BOILERPLATE_SHARE
    n_boiler = int(round(n * boiler_share)) if spec.skew else 0
    hot_slots = np.arange(len(texts) - n_fillers, len(texts) - n_fillers + n_hot)
    for slot in hot_slots:
        texts[slot] = hot_page
    others = np.setdiff1d(np.arange(n), hot_slots)
    boiler_slots = np.sort(skew_rng.choice(others, size=min(n_boiler, len(others)), replace=False))
    for slot in boiler_slots:
        texts[slot] = with_paragraph(texts[slot], boilerplate, skew_rng)
    # Pairs sharing only the boilerplate (family -1): the hard negatives of the acceptance curve.
    n_family_pairs = len(pair_slots)
    if len(boiler_slots) > 1:
        drawn = np.random.default_rng([spec.seed, 6]).choice(boiler_slots, size=(n_boiler // 2, 2))
        for x, y in drawn[drawn[:, 0] != drawn[:, 1]]:
            pair_slots.append((int(x), int(y), "boilerplate~boilerplate", -1))

    # Ids are a random permutation of the slots, so the members of a family lie far apart.
    doc_id = np.random.default_rng([spec.seed, 4]).permutation(n).astype(np.int64)
    corpus = corpus_table(texts, doc_id)
    a = doc_id[[p[0] for p in pair_slots]] if pair_slots else np.zeros(0, np.int64)
    b = doc_id[[p[1] for p in pair_slots]] if pair_slots else np.zeros(0, np.int64)
    planted = pa.table(
        {
            "doc_a": pa.array(np.minimum(a, b)),
            "doc_b": pa.array(np.maximum(a, b)),
            "relation": pa.array([p[2] for p in pair_slots], type=pa.string()),
            "family": pa.array([p[3] for p in pair_slots], type=pa.int64()),
        }
    )
    meta = {
        **described(spec, pool, texts),
        "families": n_families,
        "family_documents": (2 if spec.dense else 3) * n_families,
        "variant_kinds": variant_kinds,
        "planted_pairs": n_family_pairs,
        "boilerplate_pairs": len(pair_slots) - n_family_pairs,
        "hot_page_copies": n_hot,
        "hot_page_ids_min": int(doc_id[hot_slots].min()) if n_hot else None,
        "boilerplate_documents": n_boiler,
        "boilerplate": boilerplate,
    }
    return corpus, planted, meta


def generate_hostile(
    spec: CorpusSpec, pool: list[str], *, skew_seed: int | None = None
) -> tuple[pa.Table, pa.Table, dict]:
    """The recipe built to hurt (:data:`HOSTILE_PARAGRAPHS` and what follows it), as
    :func:`generate` returns a corpus: the corpus, the planted pairs (a sample of the families'
    pairs, :data:`HOSTILE_PLANTED`) and what was made. ``skew_seed`` chooses the reused paragraphs,
    the blocks and the template, which the shards of a large corpus share."""
    n = spec.docs
    shared = Generator(pool, spec.seed if skew_seed is None else skew_seed)
    reused = [" ".join(p) for _ in range(HOSTILE_PARAGRAPHS) for p in shared.base()[:1]]
    blocks = [" ".join(s for p in shared.base()[:2] for s in p) for _ in HOSTILE_BLOCKS]
    header, footer = (" ".join(shared.base()[0]) for _ in range(2))
    gen = Generator(pool, spec.seed)
    rng = np.random.default_rng([spec.seed, 7])

    def document() -> str:
        paragraphs = []
        for p in gen.base():
            take = rng.random() < HOSTILE_REUSED
            paragraphs.append(reused[int(rng.integers(len(reused)))] if take else " ".join(p))
        return "\n\n".join(paragraphs)

    n_family_docs = int(n * HOSTILE_FAMILY_SHARE)
    sizes = [HOSTILE_FAMILY_SIZE] * (n_family_docs // HOSTILE_FAMILY_SIZE)
    if n_family_docs % HOSTILE_FAMILY_SIZE >= 2:
        sizes.append(n_family_docs % HOSTILE_FAMILY_SIZE)
    texts: list[str] = []
    families: list[tuple[int, int]] = []  # (first slot, size)
    for size in sizes:
        source = gen.base()
        families.append((len(texts), size))
        rates = rng.choice(HOSTILE_FAMILY_RATES, size=size - 1)
        texts.append(render(source))
        texts.extend(gen.variant(source, "substitute", float(r)) for r in rates)
    texts.extend(document() for _ in range(n - len(texts)))
    slots = np.arange(n)
    for block, count in zip(blocks, HOSTILE_BLOCKS, strict=True):
        for slot in rng.choice(slots, size=min(count, n), replace=False):
            texts[slot] = with_paragraph(texts[slot], block, rng)
    templated = rng.choice(slots, size=int(n * HOSTILE_TEMPLATE_SHARE), replace=False)
    for slot in templated:
        texts[slot] = f"{header}\n\n{texts[slot]}\n\n{footer}"
    doc_id = np.random.default_rng([spec.seed, 4]).permutation(n).astype(np.int64)
    found: dict[tuple[int, int], int] = {}
    for family, (first, size) in enumerate(families):
        want = min(HOSTILE_PLANTED // max(1, len(families)), size * (size - 1) // 2)
        for x, y in rng.integers(first, first + size, size=(want, 2)).tolist():
            a, b = sorted((int(doc_id[x]), int(doc_id[y])))
            if a != b:
                found.setdefault((a, b), family)
    corpus = corpus_table(texts, doc_id)
    planted = pa.table(
        {
            "doc_a": pa.array([a for a, _ in found], type=pa.int64()),
            "doc_b": pa.array([b for _, b in found], type=pa.int64()),
            "relation": pa.array(["near_copy~near_copy"] * len(found), type=pa.string()),
            "family": pa.array(list(found.values()), type=pa.int64()),
        }
    )
    meta = {
        **described(spec, pool, texts),
        "families": len(families),
        "family_documents": int(sum(sizes)),
        "variant_kinds": {"substitute": int(sum(sizes)) - len(families)},
        "planted_pairs": planted.num_rows,
        "boilerplate_pairs": 0,
        "hot_page_copies": 0,
        "hot_page_ids_min": None,
        "boilerplate_documents": int(sum(min(c, n) for c in HOSTILE_BLOCKS)),
        "boilerplate": blocks[0],
        "reused_paragraphs": HOSTILE_PARAGRAPHS,
        "boilerplate_blocks": list(HOSTILE_BLOCKS),
        "templated_documents": len(templated),
    }
    return corpus, planted, meta


def write(corpus: pa.Table, planted: pa.Table, meta: dict, target: Path, files: int) -> None:
    """Write the corpus in ``files`` Parquet files, the planted pairs and meta.json, atomically."""
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "corpus").mkdir(parents=True)
    per_file = -(-corpus.num_rows // files)
    for i in range(files):
        part = corpus.slice(i * per_file, per_file)
        pq.write_table(part, tmp / "corpus" / f"part-{i:05d}.parquet", row_group_size=20_000)
    pq.write_table(planted, tmp / "planted.parquet")
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


SHARD_DOCS = 1_000_000  # a corpus larger than this is generated and written a shard at a time


def build(spec: CorpusSpec, work: Path = WORK) -> Corpus:
    """The corpus for ``spec``: from the cache under ``work``, else generated and cached.

    Up to :data:`SHARD_DOCS` documents it is generated whole. A larger one is generated in shards
    of that size, each held in memory alone (about 3 GB at 1M documents of 1.4 KB): shard i is the
    recipe at seed ``seed * 1000 + i`` with ids ``i * SHARD_DOCS`` onwards, and every shard shares
    the hot page and the boilerplate paragraph of ``seed``. Families stay within a shard.
    """
    target = work / spec.key
    if not (target / "meta.json").exists():
        started = time.monotonic()
        if spec.docs <= SHARD_DOCS:
            make = generate_hostile if spec.hostile else generate
            corpus, planted, meta = make(spec, load_pool(work))
            meta["generate_seconds"] = round(time.monotonic() - started, 1)
            write(corpus, planted, meta, target, spec.files)
        else:
            build_sharded(spec, load_pool(work), target, started)
    meta = json.loads((target / "meta.json").read_text())
    return Corpus(path=target / "corpus", planted=target / "planted.parquet", meta=meta)


def build_sharded(spec: CorpusSpec, pool: list[str], target: Path, started: float) -> None:
    """Write a corpus of more than :data:`SHARD_DOCS` documents one shard at a time (see
    :func:`build`), atomically: planted pairs and meta.json summed over the shards."""
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "corpus").mkdir(parents=True)
    shards = -(-spec.docs // SHARD_DOCS)
    per_shard_files = max(2, spec.files // shards)
    planted_parts = []
    total: dict = {}
    for i in range(shards):
        docs = min(SHARD_DOCS, spec.docs - i * SHARD_DOCS)
        shard = CorpusSpec(
            docs=docs,
            seed=spec.seed * 1000 + i,
            skew=spec.skew,
            dense=spec.dense,
            hostile=spec.hostile,
        )
        make = generate_hostile if spec.hostile else generate
        corpus, planted, meta = make(shard, pool, skew_seed=spec.seed)
        offset = i * SHARD_DOCS
        corpus = corpus.set_column(0, "doc_id", pc.add(corpus.column("doc_id"), offset))
        for name in ("doc_a", "doc_b"):
            at = planted.schema.get_field_index(name)
            planted = planted.set_column(at, name, pc.add(planted.column(name), offset))
        planted_parts.append(planted)
        per_file = -(-corpus.num_rows // per_shard_files)
        for f in range(per_shard_files):
            part = corpus.slice(f * per_file, per_file)
            path = tmp / "corpus" / f"part-{i:03d}-{f:03d}.parquet"
            pq.write_table(part, path, row_group_size=20_000)
        for key in (
            "documents",
            "text_bytes",
            "families",
            "family_documents",
            "planted_pairs",
            "boilerplate_pairs",
            "hot_page_copies",
            "boilerplate_documents",
        ):
            total[key] = total.get(key, 0) + meta[key]
        kinds = total.setdefault("variant_kinds", {})
        for kind, count in meta["variant_kinds"].items():
            kinds[kind] = kinds.get(kind, 0) + count
        if meta["hot_page_ids_min"] is not None:
            low = meta["hot_page_ids_min"] + offset
            total["hot_page_ids_min"] = min(total.get("hot_page_ids_min", low), low)
        total["boilerplate"] = meta["boilerplate"]
        print(f"[corpus] shard {i + 1} of {shards}: {docs:,} documents", flush=True)
        del corpus
    pq.write_table(pa.concat_tables(planted_parts), tmp / "planted.parquet")
    meta = {
        "spec": asdict(spec),
        "version": VERSION,
        "pool_sentences": len(pool),
        "pool_digest": pool_digest(pool),
        "shards": shards,
        **total,
        "mean_doc_bytes": round(total["text_bytes"] / total["documents"], 1),
        "generate_seconds": round(time.monotonic() - started, 1),
    }
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench.corpus", description="Generate a benchmark corpus."
    )
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--skew", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--dense", action="store_true", help="the pair-denser recipe")
    parser.add_argument("--hostile", action="store_true", help="the recipe built to hurt")
    args = parser.parse_args(argv)
    corpus = build(
        CorpusSpec(
            docs=args.docs, seed=args.seed, skew=args.skew, dense=args.dense, hostile=args.hostile
        )
    )
    print(corpus.path)
    print(json.dumps({k: v for k, v in corpus.meta.items() if k != "boilerplate"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
