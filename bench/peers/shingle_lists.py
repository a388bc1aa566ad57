"""Every document's distinct shingle hashes, for the peers: the library's shingles, vectorized.

The peers must see the same words and shingles as the pipeline, so they use the library's own
batch sketcher (:func:`shingling.fast.sketch.sketch_batch`) with a sketch size no document reaches: its
"bottom-k" is then the whole sorted set of the document's shingle hashes.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from shingling.fast.sketch import sketch_batch
from shingling.sketch import DEFAULT_WIDTH

ALL = 1 << 40  # more shingles than any document has


def shingle_hash_lists(
    texts: pa.Array | pa.ChunkedArray, width: int = DEFAULT_WIDTH
) -> pa.ListArray:
    """The sorted distinct shingle hashes of each text; empty for a null text or one with no words.

    >>> shingle_hash_lists(pa.array(["a b c d e", None, "x"])).value_lengths().to_pylist()
    [2, 0, 1]
    """
    sketches = sketch_batch(texts, width=width, k=ALL).sketch
    return pc.fill_null(sketches, pa.scalar([], type=sketches.type))
