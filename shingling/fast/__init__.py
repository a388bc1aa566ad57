"""The compiled path: the reference of :mod:`shingling` over Arrow batches, in numba loops.

One module per step, each naming the reference it equals (and tested equal to it, bit for bit):
``xxh64`` (:mod:`shingling.hashing`), ``text`` (UTF-8 checks, words and shingle hashes:
:mod:`shingling.normalize`, :mod:`shingling.shingles`), ``sketch`` (:mod:`shingling.sketch`),
``exact`` (:mod:`shingling.exact`), ``estimators`` (:mod:`shingling.estimators` and the rules of
:mod:`shingling.pairs`), ``frequency`` (the count-min sketch that orders the join's prefixes),
``postings`` (the full run's prefix join), ``probe`` (the nightly join of a batch against the
index); ``compiled`` compiles them. The Spark jobs call these inside ``mapInArrow``.
"""
