"""``python -m actors.node``: see ``actors.node``."""

import sys

from ._serve import main

main(sys.argv[1:])
