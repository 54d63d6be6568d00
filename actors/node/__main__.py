"""``python -m actors.node``: see :mod:`actors.node`."""

import sys

from ._serve import main

main(sys.argv[1:])
