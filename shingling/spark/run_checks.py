"""What a run checks before it writes: the settings an index can honour, the texts a corpus holds,
and the paths it is about to write.

An index's nights must sketch and pair as the index was made, or the pair table mixes figures of two
settings; a corpus given again (``build_index --input``, ``dedup --input``) must hold the texts the
run sketched, or the index keeps (and dedup removes) documents for texts they do not have.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from shingling.errors import BadInputError, ConfigError
from shingling.index import MANIFEST, SEGMENT, TEXTS, Manifest
from shingling.schema import DOC_ID, SKETCH, SKIP_REASON, TEXT, TEXT_CHECKSUM, TEXT_HASH
from shingling.spark.index.errors import IndexMismatchError, ManifestError, MissingTextsError
from shingling.spark.index.store import parse_manifest
from shingling.spark.paths import is_local, local_part
from shingling.spark.transforms import sketch_documents
from shingling.spark.verify import MISSING_TEXT

#: The settings an index records (shingling.spark.index.segments.index_settings), as a config names them.
SETTING_NAMES = {
    "width": "sketch.width",
    "k": "sketch.k",
    "unit": "sketch.unit",
    "sample_mod": "sketch.sample_mod",
    "threshold": "pairs.threshold",
    "max_exact_group": "pairs.max_exact_group",
    "verify": "pairs.verify",
    "candidate_margin": "pairs.candidate_margin",
}
#: What an index made before a setting was recorded was made with (the only value it could have).
UNRECORDED = {"unit": "words", "sample_mod": 0}


def index_settings_difference(recorded: dict[str, Any], wanted: dict[str, Any]) -> str | None:
    """The first setting in which a run (``wanted``) differs from its index (``recorded``), as a
    sentence naming it; None when they agree.

    >>> index_settings_difference({"width": 4, "k": 20}, {"width": 4, "k": 20, "unit": "words"})
    >>> index_settings_difference({"k": 20}, {"k": 64})
    'sketch.k = 64 differs from the index, made with sketch.k = 20'
    """
    for key in [*wanted, *(key for key in recorded if key not in wanted)]:
        mine = wanted.get(key, UNRECORDED.get(key))
        theirs = recorded.get(key, UNRECORDED.get(key))
        if mine != theirs:
            name = SETTING_NAMES.get(key, key)
            shown = "(not set)" if mine is None else _toml(mine)
            made = "(not set)" if theirs is None else _toml(theirs)
            return f"{name} = {shown} differs from the index, made with {name} = {made}"
    return None


def _toml(value: Any) -> str:
    """A setting's value as --set takes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


def check_index_settings(recorded: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Refuse a run whose sketch or pair settings differ from its index's (exit 2, naming one).

    Raises:
        IndexMismatchError: a setting differs.
    """
    difference = index_settings_difference(recorded, wanted)
    if difference is not None:
        raise IndexMismatchError(
            f"{difference}: a night must sketch and pair as its index was made, or the pair table"
            " mixes the figures of two settings; set it to the index's value (--set), or build a"
            " new index"
        )


def check_nights_can_honour(unit: str, sample_mod: int, *, where: str) -> None:
    """Refuse settings the nightly runs do not implement: character shingles and containment.

    The nights sketch words, bottom-k only, and pair by Jaccard; an index made of a character or
    containment run would get nights whose ``matches`` and scores mean something else.

    Raises:
        ConfigError: ``unit`` is not "words" or ``sample_mod`` is not 0 (``where`` says whose).
    """
    if unit != "words":
        raise ConfigError(
            f"{where}: sketch.unit = {unit!r}: the nightly runs sketch words only, so an index of"
            " character shingles cannot be continued; use the full run (jobs/near_duplicates.py)"
        )
    if sample_mod != 0:
        raise ConfigError(
            f"{where}: sketch.sample_mod = {sample_mod}: the nightly runs find no excerpts"
            " (containment mode), so such an index cannot be continued; use the full run, or"
            " sketch.sample_mod = 0"
        )


CORPUS_CHECKSUM = "corpus_checksum"


def corpus_checksums(corpus: DataFrame) -> DataFrame:
    """(doc_id, text) -> (doc_id, corpus_checksum): each text's checksum, computed in the JVM
    (:func:`shingling.hashing.text_checksum`), so only ids and numbers leave the scan."""
    return corpus.where(F.col(TEXT).isNotNull()).select(
        DOC_ID, F.xxhash64(TEXT).alias(CORPUS_CHECKSUM)
    )


def check_corpus_texts(corpus: DataFrame, documents: DataFrame, *, unit: str, source: str) -> None:
    """Refuse a corpus that does not hold the texts a run sketched (one Spark action).

    ``corpus``: (doc_id, text), as :func:`shingling.spark.read.read_corpus` reads it; ``documents``:
    the run's documents table. Every sketched document of the run must be in the corpus with the
    same text: its ``text_checksum`` (the raw text's, computed in the JVM) when the table records
    it, else (a run made before it did) its ``text_hash`` (the hash of the text's words, the same
    for any width and k, so the corpus is sketched again with width 1 and k 1).

    Raises:
        BadInputError: a sketched document's id is missing from the corpus, or its text there has
            another hash (exit 3, naming the id).
    """
    if TEXT_CHECKSUM in documents.columns:
        _refuse_mismatch(documents, corpus_checksums(corpus), TEXT_CHECKSUM, source=source)
        return
    hashed = (
        sketch_documents(corpus, width=1, k=1, unit=unit)
        .where(F.col(DOC_ID).isNotNull())
        .select(DOC_ID, F.col(TEXT_HASH).alias(CORPUS_CHECKSUM))
    )
    _refuse_mismatch(documents, hashed, TEXT_HASH, source=source)


def _refuse_mismatch(documents: DataFrame, found: DataFrame, column: str, *, source: str) -> None:
    # a document has a sketch exactly when it has no skip reason (a string column: cheap to read)
    sketched = documents.where(F.col(SKIP_REASON).isNull()).select(DOC_ID, column)
    refuse_other_texts(sketched.join(found, DOC_ID, "left"), column, source=source)


def refuse_other_texts(compared: DataFrame, column: str, *, source: str) -> None:
    """Refuse, from (doc_id, ``column``: the run's hash, corpus_checksum: the corpus's) rows of
    the run's sketched documents, a corpus whose text is missing or differs (one Spark action)."""
    wrong = (
        compared.where(~F.col(column).eqNullSafe(F.col(CORPUS_CHECKSUM)))
        .select(DOC_ID, F.col(CORPUS_CHECKSUM).isNull().alias("missing"))
        .limit(1)
        .collect()
    )
    if not wrong:
        return
    doc_id, missing = wrong[0][DOC_ID], wrong[0]["missing"]
    if missing:
        raise BadInputError(
            f"document {doc_id!r} of the run has no text in {source}: the corpus must hold every"
            " text the run sketched; pass the corpus the run read"
        )
    raise BadInputError(
        f"document {doc_id!r} has another text in {source} than the run sketched (its hash differs"
        " from the run's documents table): pass the corpus the run read"
    )


def check_writable_dir(role: str, path: str | None) -> None:
    """Refuse, before Spark starts, a local directory to write that cannot be: a file, or a
    directory (or the nearest existing parent of one to create) this user cannot write.

    Raises:
        ConfigError: ``path`` is a file, or is not writable (exit 2, naming it).
    """
    if not path or not is_local(path):
        return  # another filesystem: its own errors, translated when they come
    local = os.path.abspath(local_part(path))
    if os.path.lexists(local) and not os.path.isdir(local):
        raise ConfigError(f"{role} {path} is a file, not a directory; choose another {role}")
    existing = local
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        raise ConfigError(f"{role} {path}: {existing} is a file, so {path} cannot be created")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{role} {path}: {existing} is not writable by this user")


def local_manifest(index: str) -> Manifest | None:
    """The committed manifest of a local index, read before Spark starts (None elsewhere, or if
    nothing was committed), so that a run it would refuse is refused at once.

    Raises:
        ManifestError: the manifest is truncated or edited (exit 3, naming it).
    """
    if not is_local(index):
        return None
    path = os.path.join(os.path.abspath(local_part(index)), MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"cannot read {path}: {e}") from e
    return parse_manifest(path, text)


_SEGMENT_TEXTS = re.compile(r"segments/([^/\s]+)/" + TEXTS + "/")


def missing_stored_text(
    error: BaseException, index: str, texts: DataFrame | None, others: DataFrame | None
) -> MissingTextsError | None:
    """The error to report when a night failed for want of an indexed document's stored text.

    The executors fail with :data:`shingling.spark.verify.MISSING_TEXT` (a candidate pair without its text)
    or Spark cannot read a file of a segment's ``texts/`` (deleted meanwhile); either arrives here
    as a Py4J error with an executor's stack. This names the segment: from the file's path, or by
    one query for the live documents (``others``: doc_id, segment, sketch) whose text
    (``texts``: doc_id, segment) is missing. None if the failure is something else.
    """
    message = str(error)
    found = _SEGMENT_TEXTS.search(message)
    if found is None and MISSING_TEXT not in message:
        return None
    segments: list[str] = [found.group(1)] if found else []
    if not segments and texts is not None and others is not None:
        try:
            rows = (
                others.where(F.col(SKETCH).isNotNull())
                .select(DOC_ID, SEGMENT)
                .join(texts.select(DOC_ID, SEGMENT), [DOC_ID, SEGMENT], "left_anti")
                .groupBy(SEGMENT)
                .count()
                .orderBy(SEGMENT)
                .collect()
            )
            segments = [f"{r[SEGMENT]} ({r['count']} documents without text)" for r in rows]
        except Exception:  # noqa: BLE001 - the index cannot be read either: say what we know
            segments = []
    where = ", ".join(segments) if segments else "(the segment could not be told)"
    return MissingTextsError(
        f"index {index}: texts stored for verification are missing or unreadable in segment"
        f" {where}, so the"
        " pairs their documents make cannot be verified; nothing was committed. Restore"
        f" segments/<segment>/{TEXTS}/ from a backup of the index, or build a new index from a"
        " full run (jobs/build_index.py)"
    )
