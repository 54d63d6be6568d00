"""The runtime's logger (``actors``) and the extras of its lifecycle records."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["log_extra", "logger"]

logger = logging.getLogger("actors")


def log_extra(cell: Cell, event: str) -> dict[str, str]:
    """``extra`` of the lifecycle log records: ``record.actor_path`` and
    ``record.actor_event`` ("failure", "restart", "directive", "escalation",
    "stop"), so handlers can filter on them."""
    return {"actor_path": cell.path, "actor_event": event}
