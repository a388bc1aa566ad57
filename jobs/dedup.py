"""spark-submit entry point of the job in shingling/spark/jobs/dedup.py:
From a run's pairs to a decision: which documents to keep, and a deduplicated corpus.

    spark-submit --py-files dist/shingling.zip jobs/dedup.py --help

``shingling run dedup`` runs the same job; this script only turns its arguments into an
exit code.
"""

import sys

from shingling.spark.jobs.dedup import main

if __name__ == "__main__":
    sys.exit(main())
