"""The benchmark rows, one module per group; each registers its rows on import.

To add a group, write ``benchmarks/rows/<group>.py`` that calls
``benchmarks._registry.register(Row(...))`` and add its name to :data:`MODULES`.
"""

from __future__ import annotations

import importlib
import sys
from typing import Final

__all__ = ["MODULES", "load"]

#: Row modules, in the order their rows run and are reported.
MODULES: Final = (
    "channel",
    "mailbox",
    "telemetry",
    "actors",
    "footprint",
    "throughput",
    "timers",
    "remote",
    "scale",
    "persistence",
    "persistence_jetstream",
    "delivery",
    "delivery_jetstream",
    "sharding",
    "sharding_remote",
)


def load() -> None:
    """Import every row module (registering its rows); safe to call twice.

    A module whose optional dependency is missing (the remote rows without
    the ``remote`` extra) is skipped with a note naming what to install.
    """
    for name in MODULES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            top = (exc.name or "actors").partition(".")[0]
            if top in ("actors", "benchmarks"):
                raise
            note = str(exc) if "pip install" in str(exc) else f"{top} is not installed"
            print(f"benchmarks: {name} rows skipped: {note}", file=sys.stderr)
