"""``python -m shingling.cli``, as the ``shingling`` command."""

import sys

from shingling.cli import main

if __name__ == "__main__":  # not when a tool imports every module (doctests, the layout test)
    sys.exit(main())
