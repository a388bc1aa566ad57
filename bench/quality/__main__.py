import sys

from bench.quality.run import main

sys.exit(main())
