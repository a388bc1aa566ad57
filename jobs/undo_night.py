"""spark-submit entry point of the job in shingling/spark/jobs/undo_night.py:
Undo the index's last night: the index and the pair table back to the version before it.

    spark-submit --py-files dist/shingling.zip jobs/undo_night.py --help

``shingling run undo-night`` runs the same job; this script only turns its arguments into an
exit code.
"""

import sys

from shingling.spark.jobs.undo_night import main

if __name__ == "__main__":
    sys.exit(main())
