"""Writing the persistent sketch index with Spark, and the commit protocol that keeps it whole.

The layout is documented in :mod:`shingling.index` (the reader). A run that adds documents to the
index (:mod:`shingling.spark.jobs.nightly` each night, :mod:`shingling.spark.jobs.build_index`
once) goes through these steps:

1. **Lock.** It takes ``index/_lock``. On a local or NFS-less POSIX disk this is an ``flock`` on the
   file, which the kernel releases when the process dies, so a killed run never leaves a stale
   lock. On other filesystems (HDFS) it is an exclusive create of ``_lock``, removed at the end; a
   killed run leaves it behind and the next run refuses (exit 6) until an operator passes
   ``--break-lock``. On an object store (S3) exclusive create is not atomic: let the scheduler run
   one job per index at a time (Airflow ``max_active_runs=1``). A run that cannot take the lock
   exits with code 6 and changes nothing.
2. **Recover.** Under the lock it finishes what a committed run may have left undone (moving its
   staged pair partition into place, see 6) and deletes what killed runs left: segment directories
   the manifest does not name, version files above the manifest's version, and
   ``pairs/_staging/``.
3. **Write aside.** The new segment is written under ``index/segments/<seq>-<run id>/`` and the
   run's pair partition under ``pairs/_staging/<run id>/run_date=<date>/``. Neither is visible:
   readers of the index only follow ``_manifest.json``, and readers of the pair table (Spark,
   pyarrow) skip directories whose names start with ``_``.
4. **Check.** It re-reads ``_manifest.json``: if its version is no longer the one the run started
   from, another writer committed meanwhile (possible only without a working lock) and this run
   aborts.
5. **Commit** (the one atomic step). It writes the new manifest to ``_versions/<version>.json``
   (exclusive create: of two runs committing the same version, only one can), then writes it aside
   and renames it over ``_manifest.json``. Before this rename the index is exactly as before; after
   it, the run is committed.
6. **Publish.** It renames the staged pair partition to ``pairs/run_date=<date>/``. The manifest
   already records both paths, so if the run dies between 5 and 6 the next run (step 2) does the
   rename: the pair table can lag a committed index by one rename, never hold an uncommitted run.

A compaction (:mod:`shingling.spark.jobs.compact_index`, :mod:`.compaction`) follows the same steps
with no pair partition: under the lock, after recovery, it writes the live rows of every segment as one new
segment aside, checks the base version, and commits a manifest that names that segment alone;
then it deletes the replaced segments (if it dies first, step 2 of the next run deletes them).

Test hook: when the environment variable ``SHINGLING_TEST_HOOK`` is ``<point>=exit`` the process
exits at once (``os._exit(97)``, no clean-up) on reaching ``<point>``; ``<point>=sleep:<seconds>``
makes it sleep there (the tests kill it meanwhile, or start a second run). The points are named in
shingling/spark/jobs/nightly.py (``sketched``, ``pairs_staged``, ``index_written``, ``versioned``, ``committed``).
Never set it in production.

The modules: :mod:`.store` (the index directory: ownership, lock, recovery, live rows, the
manifest swap), :mod:`.published` (the pair and decisions tables runs publish into),
:mod:`.transaction` (a night), :mod:`.compaction`, :mod:`.rollback` (undoing the last night),
:mod:`.segments` (how a segment's files are written, the settings an index is made with),
:mod:`.arguments` (the jobs' options) and :mod:`.errors`.
"""
