"""Three corpora of real text this machine ships, with the near-duplicates that occur naturally.

    python -m bench.quality.corpora [--corpora short,long,boilerplate]   builds and prints them

- **short**: the docstrings of functions and classes (``ast.get_docstring``) of the project's
  ``.venv`` site-packages and of the running Python's standard library. pyspark.pandas copies
  pandas' docstrings, pyspark.sql.connect pyspark.sql's, numpy, scipy and pandas share many, and
  overridden methods repeat their base class's with small changes.
- **long**: whole modules (``*.py``, 3 KB to 40 KB, tests left out) of every Python 3 standard
  library installed on the machine (pyenv's versions, ``/usr/lib/python3.*``): the same module in
  successive versions is a natural near-duplicate, from identical to heavily rewritten.
- **boilerplate**: licence texts: each stanza of the Debian ``/usr/share/doc/*/copyright`` files
  (machine-readable ones split at blank lines, the others whole), ``/usr/share/common-licenses/*``,
  and the LICENSE/COPYING/NOTICE files of installed Python distributions and node modules: the
  same licences with small natural variations (names, years, wording of versions).

Nothing is planted or edited. Files are listed in sorted order and documents numbered in that
order (doc_id 0..n-1), so a corpus is the same on every run on one machine; another machine ships
other text, so each corpus's digest (of its ids, sources and texts) is recorded with every result.
Written as Parquet (doc_id int64, text string, source string) under ``bench/work/quality/``.
"""

from __future__ import annotations

import argparse
import ast
import glob
import gzip
import json
import re
import sys
import sysconfig
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

from bench.corpus import WORK

VERSION = 1
QUALITY_WORK = WORK / "quality"
REPO = Path(__file__).resolve().parents[2]
SITE_PACKAGES = REPO / ".venv" / "lib" / "python3.11" / "site-packages"
#: path parts that mark a test suite: left out of the stdlib sources
TEST_PARTS = frozenset(
    {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}
)
LICENCE_NAME = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE)([.-].*)?$", re.I)

Doc = tuple[str, str]  # (source, text)


@dataclass(frozen=True)
class Spec:
    """One corpus: how its documents are found, and the size bounds applied."""

    name: str
    what: str
    documents: Callable[[], Iterator[Doc]]
    min_words: int
    max_docs: int


def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        if b"\0" in raw[:4096]:
            return None
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def stdlib_roots() -> list[Path]:
    """Every Python 3 standard library on the machine, sorted: the running Python's, pyenv's
    versions and the system's."""
    found = {Path(sysconfig.get_paths()["stdlib"]).resolve()}
    patterns = [
        str(Path.home() / ".pyenv/versions/3.*/lib/python3.*"),
        "/usr/lib/python3.*",
        "/usr/local/lib/python3.*",
    ]
    for pattern in patterns:
        for p in glob.glob(pattern):
            path = Path(p)
            if path.is_dir() and (path / "os.py").exists():
                found.add(path.resolve())
    return sorted(found)


def _python_files(root: Path, min_bytes: int = 0, max_bytes: int = 1 << 62) -> list[Path]:
    out = []
    for p in root.rglob("*.py"):
        rel = p.relative_to(root).parts
        if TEST_PARTS.intersection(rel[:-1]) or rel[-1].startswith("test_"):
            continue
        try:
            size = p.stat().st_size
        except OSError:
            continue
        if p.is_file() and min_bytes <= size <= max_bytes:
            out.append(p)
    return sorted(out)


# --- short: docstrings --------------------------------------------------------------------------


def docstrings(path: Path, label: str) -> Iterator[Doc]:
    """(``label::Qualified.name``, docstring) of every function and class of a module."""
    text = _read(path)
    if text is None:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return

    def walk(node: ast.AST, prefix: str) -> Iterator[Doc]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                doc = ast.get_docstring(child, clean=True)
                if doc:
                    yield f"{label}::{name}", doc
                yield from walk(child, f"{name}.")
            elif not isinstance(child, ast.expr):
                yield from walk(child, prefix)

    yield from walk(tree, "")


def short_documents() -> Iterator[Doc]:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    for root in (SITE_PACKAGES, stdlib):
        for path in _python_files(root, max_bytes=2_000_000):
            yield from docstrings(path, str(path))


# --- long: standard library modules of every installed version ---------------------------------


def long_documents() -> Iterator[Doc]:
    for root in stdlib_roots():
        for path in _python_files(root, 3_000, 40_000):
            text = _read(path)
            if text is not None:
                yield str(path), text


# --- boilerplate: licence texts ------------------------------------------------------------------


def copyright_stanzas(path: Path) -> Iterator[Doc]:
    """A Debian copyright file: each stanza of a machine-readable one (DEP-5), else the file."""
    text = _read(path)
    if text is None:
        return
    if not text.startswith("Format:"):
        yield str(path), text
        return
    for i, stanza in enumerate(re.split(r"\n[ \t]*\n", text)):
        if stanza.strip():
            yield f"{path}#{i}", stanza


def licence_files() -> list[Path]:
    roots = [SITE_PACKAGES, *(Path(p) for p in glob.glob(str(Path.home() / ".pyenv/versions/*")))]
    roots += [Path("/usr/lib/python3/dist-packages"), Path("/usr/lib/node_modules")]
    found: set[Path] = set()
    for root in roots:
        if root.is_dir():
            found.update(p for p in root.rglob("*") if LICENCE_NAME.match(p.name) and p.is_file())
    common = Path("/usr/share/common-licenses")
    if common.is_dir():
        found.update(p for p in common.iterdir() if p.is_file())
    return sorted(found)


def boilerplate_documents() -> Iterator[Doc]:
    for path in sorted(Path("/usr/share/doc").glob("*/copyright")):
        yield from copyright_stanzas(path)
    for path in licence_files():
        text = _read(path)
        if text is not None:
            yield str(path), text


SPECS: dict[str, Spec] = {
    "short": Spec(
        "short",
        "docstrings of the functions and classes of .venv's site-packages and the stdlib",
        short_documents,
        min_words=10,
        max_docs=60_000,
    ),
    "long": Spec(
        "long",
        "standard-library modules (3-40 KB, no tests) of every Python 3 on the machine",
        long_documents,
        min_words=50,
        max_docs=5_000,
    ),
    "boilerplate": Spec(
        "boilerplate",
        "Debian copyright stanzas, common-licenses, LICENSE/COPYING/NOTICE files",
        boilerplate_documents,
        min_words=20,
        max_docs=10_000,
    ),
}


# --- building -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    name: str
    path: Path  # corpus.parquet: doc_id, text, source
    meta: dict

    @property
    def documents(self) -> int:
        return int(self.meta["documents"])


def select(docs: list[Doc], min_words: int, max_docs: int) -> list[Doc]:
    """Documents of at least ``min_words`` whitespace-separated words; above ``max_docs``, a
    deterministic subset (by a hash of each source, so the same documents on every run).

    >>> select([("b", "x y z"), ("a", "one")], 2, 10)
    [('b', 'x y z')]
    """
    kept = [d for d in docs if len(d[1].split()) >= min_words]
    if len(kept) > max_docs:
        ranked = sorted(kept, key=lambda d: xxhash.xxh64_intdigest(d[0].encode(), 42))
        chosen = {d[0] for d in ranked[:max_docs]}
        kept = [d for d in kept if d[0] in chosen]
    return kept


def digest(docs: list[Doc]) -> str:
    """A fingerprint of a corpus: its ids, sources and texts in order."""
    h = xxhash.xxh64()
    for i, (source, text) in enumerate(docs):
        h.update(f"{i}\0{source}\0".encode() + text.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def write_corpus(docs: list[Doc], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "doc_id": pa.array(range(len(docs)), pa.int64()),
            "text": pa.array([d[1] for d in docs], pa.string()),
            "source": pa.array([d[0] for d in docs], pa.string()),
        }
    )
    tmp = target.with_suffix(".tmp")
    pq.write_table(table, tmp, row_group_size=max(1, len(docs) // 4 + 1))
    tmp.rename(target)


def build(name: str, work: Path = QUALITY_WORK, rebuild: bool = False) -> Corpus:
    """The named corpus, built once and cached under ``work/<name>-v<VERSION>/``."""
    spec = SPECS[name]
    base = work / f"{name}-v{VERSION}"
    path, meta_path = base / "corpus.parquet", base / "meta.json"
    if meta_path.exists() and path.exists() and not rebuild:
        return Corpus(name, path, json.loads(meta_path.read_text()))
    started = time.monotonic()
    print(f"[quality] building corpus {name}: {spec.what}", flush=True)
    found = list(spec.documents())
    docs = select(found, spec.min_words, spec.max_docs)
    write_corpus(docs, path)
    text_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for _, t in docs)
    meta = {
        "name": name,
        "version": VERSION,
        "what": spec.what,
        "documents": len(docs),
        "found": len(found),
        "min_words": spec.min_words,
        "max_docs": spec.max_docs,
        "text_bytes": text_bytes,
        "mean_doc_bytes": round(text_bytes / max(1, len(docs)), 1),
        "digest": digest(docs),
        "build_seconds": round(time.monotonic() - started, 1),
    }
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(
        f"[quality] {name}: {len(docs):,} documents ({len(found):,} found), "
        f"{text_bytes / 1e6:.1f} MB, digest {meta['digest']}, {meta['build_seconds']} s",
        flush=True,
    )
    return Corpus(name, path, meta)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.quality.corpora")
    parser.add_argument("--corpora", default=",".join(SPECS))
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args(argv)
    for name in args.corpora.split(","):
        c = build(name.strip(), rebuild=args.rebuild)
        print(json.dumps(c.meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
