"""spark-submit entry point of the job in shingling/spark/jobs/compact_index.py:
Rewrite the sketch index's segments as one, so that reading it stays as cheap as nights add up.

    spark-submit --py-files dist/shingling.zip jobs/compact_index.py --help

``shingling run compact-index`` runs the same job; this script only turns its arguments into an
exit code.
"""

import sys

from shingling.spark.jobs.compact_index import main

if __name__ == "__main__":
    sys.exit(main())
