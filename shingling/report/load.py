"""Reading a run for the report: its summary, pair table and clusters (or the groups of exact
copies found in the pair table), the best pairs and excerpts of the corpus."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from shingling.schema import (
    DOC_A,
    DOC_B,
    DOC_ID,
    EXACT,
    JACCARD,
    RUN_DOCUMENTS,
    RUN_PAIRS,
    RUN_SUMMARY,
    TEXT,
    TEXT_HASH,
)
from shingling.summaries import RunSummary

CLUSTERS_PATH = "dedup/clusters"
LARGEST_CLUSTERS = 10
MEMBERS_SHOWN = 8
EXCERPT_CHARS = 240


@dataclass(frozen=True)
class Cluster:
    """One cluster (or group of exact duplicates) for the "largest clusters" table."""

    cluster_id: Any
    size: int
    members: list[Any]
    excerpt: str | None = None


@dataclass(frozen=True)
class RunData:
    """Everything the report shows, read from a run's output.

    Attributes:
        summary: OUT/summary.json as written by the job (:class:`shingling.summaries.RunSummary`).
        jaccard_near: the ``jaccard`` of the pairs that are not exact duplicates (exact, or the
            estimates of a run made with pairs.verify = false).
        jaccard_exact: the ``jaccard`` of the exact-duplicate pairs (all 1.0).
        cluster_kind: "near-duplicate clusters" (from dedup/clusters) or "exact-duplicate groups".
        cluster_sizes: the size of every cluster of two or more documents.
        largest: the largest clusters, with members and an excerpt when the corpus was readable.
        excerpt_note: why there are no excerpts, when there are none.
        best: the most similar near-duplicate pairs, each pair of texts once (as ``shingling top``
            lists them), with excerpts of both texts when the corpus was readable.
        corpus: the corpus the excerpts come from (given, or the run's input), if any.
    """

    summary: RunSummary
    jaccard_near: np.ndarray
    jaccard_exact: np.ndarray
    cluster_kind: str
    cluster_sizes: np.ndarray
    largest: list[Cluster] = field(default_factory=list)
    excerpt_note: str | None = None
    best: list[dict[str, Any]] = field(default_factory=list)
    corpus: str | None = None


def connected_groups(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """The component label (its smallest node) of each of ``n`` nodes joined by edges a[i]-b[i].

    Min-label propagation with pointer jumping, vectorized: exact-duplicate groups are cliques or
    stars, so it settles in two or three rounds.

    >>> connected_groups(np.array([0, 3, 1]), np.array([1, 4, 2]), 6).tolist()
    [0, 0, 0, 3, 3, 5]
    """
    labels = np.arange(n, dtype=np.int64)
    while True:
        low = np.minimum(labels[a], labels[b])
        before = labels.copy()
        np.minimum.at(labels, a, low)
        np.minimum.at(labels, b, low)
        labels = labels[labels]
        if np.array_equal(labels, before):
            return labels


class UnreadableFileError(ValueError):
    """A file of the run that cannot be parsed (truncated, edited, foreign), named."""


def read_table(path: Path, columns: list[str] | None = None) -> pa.Table | None:
    """The Parquet table at ``path``, or None if there is none.

    Raises:
        UnreadableFileError: it cannot be read as Parquet (naming the path).
    """
    if not path.exists():
        return None
    try:
        return ds.dataset(path, format="parquet").to_table(columns=columns)
    except (pa.ArrowException, OSError) as e:
        raise UnreadableFileError(f"cannot read {path}: {e}") from e


def exact_groups(pairs: pa.Table) -> tuple[np.ndarray, list[Cluster]]:
    """Groups of exact duplicates from the pair table: their sizes, and all groups largest first."""
    exact = pairs.filter(pairs[EXACT])
    if exact.num_rows == 0:
        return np.zeros(0, dtype=np.int64), []
    # index ids in sorted order, so a group's label (its smallest index) is its smallest id
    ids = pc.unique(
        pa.concat_arrays([exact[DOC_A].combine_chunks(), exact[DOC_B].combine_chunks()])
    )
    ids = ids.take(pc.sort_indices(ids))
    a = pc.index_in(exact[DOC_A], value_set=ids).to_numpy()
    b = pc.index_in(exact[DOC_B], value_set=ids).to_numpy()
    labels = connected_groups(a, b, len(ids))
    roots, sizes = np.unique(labels, return_counts=True)
    order = np.lexsort((roots, -sizes))
    id_list = ids.to_pylist()
    clusters = []
    for i in order[:LARGEST_CLUSTERS]:
        members = np.flatnonzero(labels == roots[i])
        clusters.append(Cluster(id_list[roots[i]], int(sizes[i]), [id_list[m] for m in members]))
    return sizes, clusters


def dedup_clusters(clusters: pa.Table) -> tuple[np.ndarray, list[Cluster]]:
    """Cluster sizes (two or more members) and the largest clusters from dedup/clusters/."""
    per_cluster = clusters.group_by("cluster_id").aggregate([(DOC_ID, "count")])
    per_cluster = per_cluster.filter(pc.greater(per_cluster["doc_id_count"], 1))
    sizes = per_cluster["doc_id_count"].to_numpy()
    order = pc.sort_indices(
        per_cluster, sort_keys=[("doc_id_count", "descending"), ("cluster_id", "ascending")]
    )
    top = per_cluster.take(order[:LARGEST_CLUSTERS]).to_pylist()
    members = clusters.filter(pc.field("cluster_id").isin([c["cluster_id"] for c in top]))
    members = members.sort_by([("cluster_id", "ascending"), (DOC_ID, "ascending")])
    by_cluster: dict[Any, list[Any]] = {}
    for cid, doc in zip(
        members["cluster_id"].to_pylist(), members[DOC_ID].to_pylist(), strict=True
    ):
        by_cluster.setdefault(cid, []).append(doc)
    return sizes, [
        Cluster(c["cluster_id"], int(c["doc_id_count"]), by_cluster[c["cluster_id"]]) for c in top
    ]


def excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    """The start of a text on one line, cut at a word boundary.

    >>> excerpt("Copyright  (c) 2004\\n  Free Software Foundation, Inc.", 30)
    'Copyright (c) 2004 Free…'
    """
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def distinct_pairs(
    pairs: Iterator[dict[str, Any]], key: dict[Any, Any], n: int
) -> tuple[list[dict[str, Any]], int]:
    """The first ``n`` pairs that show a text not yet shown, and how many were passed over.

    An exact-duplicate group repeats the same two texts under many id pairs; a pair whose two
    texts both appeared already adds nothing to read.

    >>> ps = [{"doc_a": a, "doc_b": b} for a, b in [("a1", "b"), ("a2", "b"), ("a1", "c")]]
    >>> shown, skipped = distinct_pairs(iter(ps), {"a1": 1, "a2": 1, "b": 2, "c": 3}, 5)
    >>> [p["doc_b"] for p in shown], skipped
    (['b', 'c'], 1)
    """
    shown: set[Any] = set()
    best: list[dict[str, Any]] = []
    skipped = 0
    for p in pairs:
        ka = ("text", key[p[DOC_A]]) if p[DOC_A] in key else ("id", p[DOC_A])
        kb = ("text", key[p[DOC_B]]) if p[DOC_B] in key else ("id", p[DOC_B])
        if ka in shown and kb in shown:
            skipped += 1
            continue
        shown |= {ka, kb}
        best.append(p)
        if len(best) == n:
            break
    return best, skipped


def sorted_pairs(pairs: pa.Table, chunk: int = 1000) -> Iterator[dict[str, Any]]:
    order = pc.sort_indices(
        pairs, sort_keys=[(JACCARD, "descending"), (DOC_A, "ascending"), (DOC_B, "ascending")]
    )
    for start in range(0, len(order), chunk):
        yield from pairs.take(order[start : start + chunk]).to_pylist()


def read_texts(corpus: str, ids: Sequence[Any], id_column: str, text_column: str) -> dict[Any, str]:
    """The texts of the given ids in a Parquet corpus (reads only those rows' column chunks).

    Raises:
        KeyError: the corpus lacks one of the two columns; its message names the column and the
            columns present.
    """
    dataset = ds.dataset(corpus, format="parquet")
    for name in (id_column, text_column):
        if dataset.schema.get_field_index(name) < 0:
            raise KeyError(f"{name!r} (columns present: {', '.join(dataset.schema.names)})")
    id_type = dataset.schema.field(id_column).type
    wanted = pa.array(list(ids)).cast(id_type)
    table = dataset.to_table(
        columns=[id_column, text_column], filter=pc.field(id_column).isin(wanted)
    )
    return dict(zip(table[id_column].to_pylist(), table[text_column].to_pylist(), strict=True))


def _with_excerpts(
    clusters: list[Cluster], corpus: str | None, summary: RunSummary
) -> tuple[list[Cluster], str | None]:
    if not clusters:
        return clusters, None
    if not corpus:
        return clusters, "no corpus path in the summary: pass --corpus to show excerpts"
    columns = summary.config.get("input", {})
    try:
        texts = read_texts(
            corpus,
            [c.members[0] for c in clusters],
            columns.get("id_column", "doc_id"),
            columns.get("text_column", "text"),
        )
    except (OSError, KeyError, pa.ArrowException) as e:
        return clusters, f"excerpts left out: cannot read the corpus at {corpus} ({e})"
    shown = [
        Cluster(c.cluster_id, c.size, c.members, excerpt(texts.get(c.members[0]))) for c in clusters
    ]
    return shown, None


class OtherRunError(ValueError):
    """A clusters table made from another run than the one reported."""


def check_clusters_run(clusters: Path, output: Path) -> None:
    """Refuse a clusters table whose dedup run (its summary.json beside it) linked another run."""
    summary = clusters.parent / RUN_SUMMARY
    if not summary.is_file():
        return  # a table written by hand: nothing says which run it came from
    try:
        made_from = json.loads(summary.read_text(encoding="utf-8")).get("run")
    except (ValueError, AttributeError) as e:  # JSON, UTF-8, not an object
        raise UnreadableFileError(f"cannot read {summary}: {e}") from e
    if made_from and Path(made_from).resolve() != output.resolve():
        raise OtherRunError(
            f"the clusters table {clusters} was made from the run {made_from}, not {output}"
        )


BEST_PAIRS = 5


def _best_pairs(
    out: Path, pairs: pa.Table, corpus: str | None, summary: RunSummary
) -> list[dict[str, Any]]:
    """The best near-duplicate pairs, each pair of texts once, with excerpts when readable."""
    near = pairs.filter(pc.invert(pairs[EXACT]))
    if near.num_rows == 0:
        return []
    try:  # the text keys only tell repeated texts apart: without them, every pair is listed
        documents = read_table(out / RUN_DOCUMENTS, [DOC_ID, TEXT_HASH])
    except (OSError, pa.ArrowException, UnreadableFileError):
        documents = None
    key: dict[Any, Any] = (
        dict(zip(documents[DOC_ID].to_pylist(), documents[TEXT_HASH].to_pylist(), strict=True))
        if documents is not None
        else {}
    )
    best, _ = distinct_pairs(sorted_pairs(near), key, BEST_PAIRS)
    texts: dict[Any, str] = {}
    if corpus:
        columns = summary.config.get("input", {})
        try:
            texts = read_texts(
                corpus,
                [p[DOC_A] for p in best] + [p[DOC_B] for p in best],
                columns.get("id_column", DOC_ID),
                columns.get("text_column", TEXT),
            )
        except (OSError, KeyError, pa.ArrowException):
            texts = {}
    return [
        {**p, "excerpt_a": excerpt(texts.get(p[DOC_A])), "excerpt_b": excerpt(texts.get(p[DOC_B]))}
        for p in best
    ]


def load_run(
    output: str | Path, corpus: str | None = None, clusters: str | Path | None = None
) -> RunData:
    """Read what the report shows from a run's output directory.

    Args:
        output: the run's output directory (holding summary.json and pairs/).
        corpus: the corpus, for excerpts; by default the input path recorded in the summary.
        clusters: a clusters table (doc_id, cluster_id, cluster_size); by default
            ``output/dedup/clusters`` when it exists.

    Raises:
        FileNotFoundError: there is no summary.json in ``output``.
        ValueError: the summary is not a run summary.
    """
    out = Path(output)
    summary = RunSummary.load(out)
    pairs = read_table(out / RUN_PAIRS)
    if pairs is None:
        pairs = pa.table(
            {
                DOC_A: pa.array([], pa.string()),
                DOC_B: pa.array([], pa.string()),
                JACCARD: pa.array([], pa.float64()),
                EXACT: pa.array([], pa.bool_()),
            }
        )
    exact_mask = pairs[EXACT].to_numpy(zero_copy_only=False).astype(bool)
    jaccard = pairs[JACCARD].to_numpy(zero_copy_only=False)
    clusters_path = Path(clusters) if clusters is not None else out / CLUSTERS_PATH
    table = read_table(clusters_path)
    if clusters is not None and table is None:
        raise FileNotFoundError(f"no clusters table at {clusters}")
    if table is not None:
        check_clusters_run(clusters_path, out)
    if table is not None:
        kind = "near-duplicate clusters"
        sizes, largest = dedup_clusters(table)
    else:
        kind = "exact-duplicate groups"
        sizes, largest = exact_groups(pairs.select([DOC_A, DOC_B, EXACT]))
    largest, note = _with_excerpts(largest, corpus or summary.input, summary)
    best = _best_pairs(out, pairs, corpus or summary.input, summary)
    return RunData(
        summary=summary,
        jaccard_near=jaccard[~exact_mask],
        jaccard_exact=jaccard[exact_mask],
        cluster_kind=kind,
        cluster_sizes=np.asarray(sizes, dtype=np.int64),
        largest=largest,
        excerpt_note=note,
        best=best,
        corpus=corpus or summary.input,
    )
