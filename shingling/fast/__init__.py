"""The compiled path: the reference of :mod:`shingling` over Arrow batches, in numba loops.

One module per step, each naming the reference it equals (and tested equal to it, bit for bit):
``kernels`` (the compiled loops: xxHash64, UTF-8 validation, sketching, pair scoring, the probe),
``batch`` (normalize, sketch and exact overlap of a batch of texts), ``frequency`` (the
count-min sketch that orders prefixes), ``postings`` (the prefix join's rows and scores), ``probe``
(the nightly join of a batch against the index). The Spark jobs call these inside ``mapInArrow``.
"""
