"""A plugin that exits the interpreter while it is imported."""

import sys

sys.exit(3)
