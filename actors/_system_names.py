"""Finding actors by path and by name: the ``ActorSystem`` methods of Erlang/OTP's
``register`` / ``whereis`` family, kept apart so the system's module stays one
concept (its scope) in a readable size."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import SystemNotRunning
from ._registry import Registry, lookup

if TYPE_CHECKING:
    from ._ref import ActorRef
    from ._runtime import Runtime

__all__ = ["ActorNames"]


class ActorNames:
    """The finding-actors part of [``ActorSystem``][actors.ActorSystem]."""

    _runtime: Runtime

    def lookup(self, path: str) -> ActorRef[Any]:
        """The ref of the actor at ``path``, e.g. ``"/user/parent/child"`` (a
        pool's path gives the pool's ref, ``".../worker-0"`` one of its
        workers). An actor that is stopping is still found until it has
        terminated.

        Raises:
            TypeError: ``path`` is not a str.
            ValueError: ``path`` does not begin with ``/``, or has an empty,
                ``.`` or ``..`` segment (``"/user/a/"``, ``"/user//a"``).
            ActorNotFound: no actor lives at ``path`` (never did, or has
                terminated).
            SystemNotRunning: the system is not running.
        """
        runtime = self._runtime
        if not runtime.running:
            raise SystemNotRunning("the actor system is not running")
        return lookup(runtime, path)

    def register(self, name: str, ref: ActorRef[Any]) -> None:
        """Give a local actor (or pool) a name that
        [``whereis``][actors.ActorSystem.whereis] finds (Erlang/OTP's
        ``register``). The registration ends when the actor terminates (before
        its ``join()`` returns), or with
        [``unregister``][actors.ActorSystem.unregister]. A name names one actor
        and an actor has one name at most; registering the same actor under its
        own name again does nothing.

        Raises:
            TypeError: ``name`` is not a str, or ``ref`` is not a ref to an
                actor of this system.
            ValueError: ``name`` is empty, or taken by another actor (the
                error names it), or ``ref`` has another name already.
            ActorStopped: the actor has stopped (or is stopping).
            SystemNotRunning: the system is not running.
        """
        runtime = self._runtime
        if not runtime.running:
            raise SystemNotRunning("the actor system is not running")
        registry = runtime.registry
        if registry is None:
            registry = runtime.registry = Registry()
        registry.register(runtime, name, ref)

    def whereis(self, name: str) -> ActorRef[Any] | None:
        """The ref registered under ``name`` (a pool's ref for a pool), or
        None (Erlang/OTP's ``whereis``).

        Raises:
            TypeError: ``name`` is not a str.
        """
        registry = self._runtime.registry
        if registry is None:
            if type(name) is not str:
                raise TypeError(f"name must be a str, not {name!r}")
            return None
        return registry.whereis(name)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (the actor goes on); an unknown name does nothing.

        Raises:
            TypeError: ``name`` is not a str.
        """
        registry = self._runtime.registry
        if registry is None:
            if type(name) is not str:
                raise TypeError(f"name must be a str, not {name!r}")
            return
        registry.unregister(name)

    @property
    def registered(self) -> dict[str, ActorRef[Any]]:
        """A copy of the registered names and their refs."""
        registry = self._runtime.registry
        return {} if registry is None else registry.names()
