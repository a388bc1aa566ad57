"""spark-submit entry point of the job in shingling/spark/jobs/build_index.py:
Create the sketch index from a full run of the core job, so nightly runs can continue from it.

    spark-submit --py-files dist/shingling.zip jobs/build_index.py --help

``shingling run build-index`` runs the same job; this script only turns its arguments into an
exit code.
"""

import sys

from shingling.spark.jobs.build_index import main

if __name__ == "__main__":
    sys.exit(main())
