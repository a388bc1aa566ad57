"""Look-up of one document: its near-duplicates among a run's documents table or in a persistent
index (``shingling query``), from the sketches alone.

The scores are :mod:`shingling.estimators`' and the filter is :func:`shingling.pairs.min_shared`,
the job's rules; what this module adds is how little it reads: candidate rows found by one
vectorized pass over a table, or, in an index, only the row groups that can hold the query's
hashes, the hottest of them left unread when the threshold allows, and candidates read best
first until no other can enter the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from shingling.estimators import containment, jaccard, matches
from shingling.index import IndexReader
from shingling.pairs import min_shared
from shingling.schema import DOC_ID, N_SHINGLES, SKETCH
from shingling.sketch import Sketch


@dataclass(frozen=True)
class Match:
    """One indexed document that shares sketch hashes with the query."""

    doc_id: Any
    matches: int
    jaccard: float
    containment: float | None  # of the query in the document; only from mod-m sketches
    n_shingles: int


def candidate_rows(
    values: np.ndarray, offsets: np.ndarray, query: np.ndarray, k: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a flattened sketch column that could reach ``threshold``, and their match counts.

    Vectorized over every indexed sketch at once: a row's matches are its hashes found in the query
    sketch. The estimate is (shared hashes in the union's k-sample) / min(k, |S(A) ∪ S(B)|), and the
    shared ones are at most the matches, so a row below threshold × that sample size cannot pass.

    >>> values, offsets = np.array([1, 2, 3, 2, 9]), np.array([0, 3, 5])
    >>> rows, m = candidate_rows(values, offsets, np.array([2, 3]), k=3, threshold=0.5)
    >>> rows.tolist(), m.tolist()
    ([0], [2])
    """
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    row_of = np.repeat(np.arange(n), lengths)
    hit = np.isin(values[offsets[0] : offsets[-1]], query)
    counts = np.bincount(row_of[hit], minlength=n)
    sample = np.minimum(k, lengths + len(query) - counts)
    need = np.array([min_shared(int(s), threshold) for s in sample], dtype=np.int64)
    possible = (counts > 0) & (counts >= need)
    rows = np.flatnonzero(possible)
    return rows, counts[rows]


def score_sketches(
    query: Sketch,
    ids: list[Any],
    sketches: list[list[int]],
    n_shingles: list[int],
    threshold: float,
) -> list[Match]:
    """The indexed documents (ids, sketches, shingle counts) whose estimate with ``query``
    reaches ``threshold``, scored by :mod:`shingling.estimators`."""
    found = []
    for doc_id, hashes, n in zip(ids, sketches, n_shingles, strict=True):
        other = Sketch(
            tuple(hashes),
            n_shingles=int(n),
            width=query.width,
            k=query.k,
            unit=query.unit,
            sample_mod=query.sample_mod,
        )
        j = jaccard(query, other)
        if j >= threshold:
            # a bottom-k sketch knows too few hashes of a long document to say how much of the
            # query it holds; a mod-m sketch grows with the document and does
            held = containment(query, other) if query.sample_mod else None
            found.append(Match(doc_id, matches(query, other), j, held, int(n)))
    return found


def query_table(table: pa.Table, query: Sketch, threshold: float) -> list[Match]:
    """Near-duplicates of a sketch in a documents table (doc_id, n_shingles, sketch), as a run
    writes ``documents/``: every row is tested at once (:func:`candidate_rows`), the few that can
    pass are scored."""
    table = table.filter(pc.is_valid(table[SKETCH]))
    column = table[SKETCH].combine_chunks()
    values = column.values.to_numpy()
    offsets = column.offsets.to_numpy()
    rows, _ = candidate_rows(
        values, offsets, np.array(query.hashes, dtype=np.int64), query.k, threshold
    )
    chosen = table.take(pa.array(rows, pa.int64()))
    return score_sketches(
        query,
        chosen[DOC_ID].to_pylist(),
        chosen[SKETCH].to_pylist(),
        chosen[N_SHINGLES].to_pylist(),
        threshold,
    )


def least_matches(threshold: float, k: int, query_size: int) -> int:
    """Fewest shared sketch hashes an indexed document needs to reach ``threshold``.

    The estimate is (shared hashes in the union's k-sample) / min(k, |S(A) ∪ S(B)|), at most
    matches / min(k, |S(A)|): a document with fewer matches cannot pass, so its row is never read.

    >>> least_matches(0.6, 20, 20), least_matches(0.6, 20, 5), least_matches(0.0, 20, 20)
    (12, 3, 1)
    """
    return min_shared(min(k, query_size), threshold)


def rank(m: Match) -> tuple[float, int, Any]:
    """The order matches are listed in: best estimate first, then most matches, then by id."""
    return (-m.jaccard, -m.matches, m.doc_id)


def hot_hashes(bounds: np.ndarray, most: int) -> np.ndarray:
    """Positions of the ``most`` hottest hashes among those whose postings may span more than
    four times the rows of the rarest one's (a hash in a few row groups is not worth leaving out).

    >>> hot_hashes(np.array([10, 10, 500, 12, 90, 0]), 2).tolist()
    [2, 4]
    """
    present = bounds[bounds > 0]
    if most <= 0 or len(present) == 0:
        return np.zeros(0, dtype=np.int64)
    hot = np.flatnonzero(bounds > 4 * present.min())
    return hot[np.argsort(-bounds[hot], kind="stable")][:most]


def query_index(
    reader: IndexReader, query: Sketch, threshold: float, limit: int, batch: int = 64
) -> list[Match]:
    """The best ``limit`` near-duplicates of a sketch in a persistent index.

    1. Postings: only the row groups whose hash range holds one of the query's hashes. A document
       must share ``enough`` hashes to reach the threshold, so up to enough - 1 of the hottest
       hashes (boilerplate, exact copies: long posting lists) could be left unread: a document that
       passes still shares one of the others (prefix filtering, as in the job's pair stage).
    2. Sketches of the candidates, most shared hashes first, a batch at a time: a candidate with at
       most m matches scores at most m / min(k, |S(A)|), so once ``limit`` matches rank above that
       bound the rest cannot enter the list and are never read.
    """
    enough = least_matches(threshold, query.k, len(query.hashes))
    hashes = np.array(query.hashes, dtype=np.int64)
    # each hash left unread loosens the filter on the candidates (and the bound that stops reading
    # them) by one match: leave out at most half of what the threshold allows
    skipped = hot_hashes(reader.posting_bounds(query.hashes), (enough - 1) // 2)
    postings = reader.postings(np.delete(hashes, skipped).tolist())
    # value_counts is one hash kernel; a group_by would start Acero's query engine for it
    tally = pc.value_counts(postings[DOC_ID]).flatten()
    counts = pa.table({DOC_ID: tally[0], "seen": tally[1]})
    counts = counts.filter(pc.greater_equal(counts["seen"], enough - len(skipped)))
    counts = counts.sort_by([("seen", "descending"), (DOC_ID, "ascending")])
    sample = min(query.k, len(query.hashes))
    found: list[Match] = []
    for start in range(0, counts.num_rows, batch):
        chunk = counts.slice(start, batch)
        # the most matches any candidate left can have: those seen plus every unread hash
        most = chunk["seen"][0].as_py() + len(skipped)
        if len(found) >= limit:
            found = sorted(found, key=rank)[:limit]
            if rank(found[-1]) < (-min(most, sample) / sample, -most, chunk[DOC_ID][0].as_py()):
                break
        documents = reader.documents(
            chunk[DOC_ID].to_pylist(), columns=(DOC_ID, N_SHINGLES, SKETCH)
        )
        documents = documents.filter(pc.is_valid(documents[SKETCH]))
        found += score_sketches(
            query,
            documents[DOC_ID].to_pylist(),
            documents[SKETCH].to_pylist(),
            documents[N_SHINGLES].to_pylist(),
            threshold,
        )
    return sorted(found, key=rank)[:limit]
