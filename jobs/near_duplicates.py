"""spark-submit entry point of the job in shingling/spark/jobs/near_duplicates.py:
Find near-duplicate documents in a Parquet corpus and write the pair table.

    spark-submit --py-files dist/shingling.zip jobs/near_duplicates.py --help

``shingling run near-duplicates`` runs the same job; this script only turns its arguments into an
exit code.
"""

import sys

from shingling.spark.jobs.near_duplicates import main

if __name__ == "__main__":
    sys.exit(main())
