"""``python -m skattr.cli``: the ``skattr`` command."""

import sys

from skattr.cli import main

if __name__ == "__main__":
    sys.exit(main())
