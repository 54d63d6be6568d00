"""The benchmark rows, one module per group; each registers its rows on import.

To add a group, write ``benchmarks/rows/<group>.py`` that calls
``benchmarks._registry.register(Row(...))`` and add its name to :data:`MODULES`.
"""

from __future__ import annotations

import importlib
from typing import Final

__all__ = ["MODULES", "load"]

#: Row modules, in the order their rows run and are reported.
MODULES: Final = (
    "channel",
    "mailbox",
    "telemetry",
    "actors",
    "timers",
    "remote",
    "scale",
    "persistence",
)


def load() -> None:
    """Import every row module (registering its rows); safe to call twice."""
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
