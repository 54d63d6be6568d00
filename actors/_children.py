"""An actor's children: stopping them, children before parents."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._cell import Cell
    from ._lifecycle import ExitReason

__all__ = ["request_stop_of_children", "stop_children", "unlink_from_parent"]


async def stop_children(cell: Cell, reason: ExitReason) -> None:
    """Stop every child of ``cell``, later-started first, waiting for each."""
    for child in reversed(list(cell.children.values())):
        child.request_stop(reason)
        await child.terminated.wait()


def request_stop_of_children(cell: Cell, reason: ExitReason) -> None:
    """Ask every child to stop without waiting (a cancelled termination)."""
    for child in list(cell.children.values()):
        child.request_stop(reason)


def unlink_from_parent(cell: Cell) -> None:
    """Remove a terminated cell from its parent's children."""
    parent = cell.parent
    if parent is not None:
        parent.remove_child(cell)
