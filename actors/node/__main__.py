"""``python -m actors.node``: see ``actors.node``."""

import sys

from ._run import main

main(sys.argv[1:])
