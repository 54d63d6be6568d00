"""Finding actors: by path (``system.lookup``) and by registered name
(``system.register`` / ``whereis`` / ``unregister``, Erlang/OTP's process
registry).

A name belongs to one live actor (or pool), and an actor has at most one
name, as in OTP. The registration ends with the actor: its termination
(``_death_watch.notify_watchers``) forgets it, before ``join()`` returns and
before its watchers get ``Terminated``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import ActorNotFound, ActorStopped
from ._ref import ActorRef

if TYPE_CHECKING:
    from ._cell import Cell
    from ._runtime import Runtime

__all__ = ["Registry", "lookup"]


def lookup(runtime: Runtime, path: str) -> ActorRef[Any]:
    """The ref of the actor (or pool) at ``path``; see ``ActorSystem.lookup``.

    Raises:
        TypeError: ``path`` is not a str.
        ValueError: ``path`` does not begin with ``/``, or has an empty,
            ``.`` or ``..`` segment (``"/user/a/"``, ``"/user//a"``).
        ActorNotFound: no actor lives at ``path`` (or it has terminated).
    """
    if type(path) is not str:
        raise TypeError(f"path must be a str, not {path!r}")
    if not path.startswith("/"):
        raise ValueError(
            f"path must be absolute, as '/user/parent/child', not {path!r}"
        )
    names = path.split("/")  # "/user/a/b" -> ["", "user", "a", "b"]
    for name in names[1:] if path != "/" else ():  # "/": the root, no actor
        if not name or name in (".", ".."):
            # No actor has such a name: the path is malformed, not missing.
            raise ValueError(
                f"path {path!r} has an empty, '.' or '..' segment (a trailing "
                "or doubled '/'?): write it as '/user/parent/child'"
            )
    cell = runtime.guardian
    if cell is None or names[1] != cell.name:
        raise ActorNotFound(f"no actor at {path!r}")
    for name in names[2:]:
        child = cell.children.get(name)
        if child is None:
            raise ActorNotFound(f"no actor at {path!r}")
        cell = child
    if cell.ended:
        raise ActorNotFound(f"no actor at {path!r} (it has terminated)")
    return cell.ref


class Registry:
    """A system's registered names (made by its first ``register``)."""

    __slots__ = ("_cells", "_names")

    def __init__(self) -> None:
        self._names: dict[str, ActorRef[Any]] = {}
        self._cells: dict[Cell, str] = {}

    def register(self, runtime: Runtime, name: str, ref: ActorRef[Any]) -> None:
        """See ``ActorSystem.register``."""
        if type(name) is not str:
            raise TypeError(f"name must be a str, not {name!r}")
        if not name:
            raise ValueError("name must not be empty")
        cell: Cell | None = getattr(ref, "_cell", None)
        if not isinstance(ref, ActorRef) or cell is None or cell.runtime is not runtime:
            raise TypeError(
                f"ref must be a ref to an actor of this system, not {ref!r}"
            )
        known = self._names.get(name)
        if known is not None:
            if known._cell is cell:
                return  # registered already under this name
            raise ValueError(f"the name {name!r} is taken by {known.path}")
        other = self._cells.get(cell)
        if other is not None:
            raise ValueError(f"{ref.path} is registered already as {other!r}")
        if not cell.alive:
            raise ActorStopped(f"{ref.path} has stopped: it cannot be registered")
        # The cell's own ref: a pool's is the pool.
        self._names[name] = cell.ref
        self._cells[cell] = name

    def whereis(self, name: str) -> ActorRef[Any] | None:
        """See ``ActorSystem.whereis``."""
        if type(name) is not str:
            raise TypeError(f"name must be a str, not {name!r}")
        return self._names.get(name)

    def unregister(self, name: str) -> None:
        """See ``ActorSystem.unregister``."""
        if type(name) is not str:
            raise TypeError(f"name must be a str, not {name!r}")
        ref = self._names.pop(name, None)
        if ref is not None:
            del self._cells[ref._cell]

    def forget(self, cell: Cell) -> None:
        """``cell`` terminated: its name is free again."""
        name = self._cells.pop(cell, None)
        if name is not None:
            del self._names[name]

    def names(self) -> dict[str, ActorRef[Any]]:
        """The registered names and their refs."""
        return dict(self._names)
