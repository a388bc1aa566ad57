"""spark-submit entry point of the job in shingling/spark/jobs/nightly.py:
Test a batch of new documents against the persistent sketch index, then add it to the index.

    spark-submit --py-files dist/shingling.zip jobs/nightly.py --help

``shingling run nightly`` runs the same job; this script only turns its arguments into an
exit code.
"""

import sys

from shingling.spark.jobs.nightly import main

if __name__ == "__main__":
    sys.exit(main())
