"""``SpawnOptions``: how an actor is spawned, besides its factory and arguments
(Akka's Props): its name, mailbox quota, drain and restart type. One type for
``ActorSystem.spawn``, ``ActorContext.spawn``, thread entry and pools, checked
in one place."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ._strategies import RESTART_TYPES, RestartType
from ._validation import check_capacity, check_limit, check_name

__all__ = ["SpawnOptions", "factory_name"]


def factory_name(factory: Callable[..., Any]) -> str:
    """The base of the default names of what ``factory`` makes: its name in
    lower case (a ``functools.partial``'s function's), or ``"actor"`` when it
    has none fit for a path (a lambda)."""
    while isinstance(factory, functools.partial):
        factory = factory.func
    name = getattr(factory, "__name__", "")
    return name.lower() if isinstance(name, str) and name.isidentifier() else "actor"


@dataclass(frozen=True, slots=True)
class SpawnOptions:
    """How to spawn an actor.

    Attributes:
        name: unique among its siblings; None: made from the factory's name.
        capacity: the mailbox quota (None: unbounded).
        drain: items taken per wake (None: the system's default).
        restart: ``"transient"``, ``"permanent"`` or ``"temporary"``, as
            Erlang child specs.

    Raises:
        TypeError: ``name`` is not a string, ``capacity`` / ``drain`` not an
            integer.
        ValueError: a malformed name, ``capacity`` or ``drain`` < 1, an
            unknown ``restart``.
    """

    name: str | None = None
    capacity: int | None = None
    drain: int | None = None
    restart: RestartType = "transient"

    def __post_init__(self) -> None:
        if self.name is not None:
            check_name(self.name)
        check_capacity(self.capacity)
        if self.drain is not None:
            check_limit(self.drain, "drain")
        if self.restart not in RESTART_TYPES:
            raise ValueError(
                f"restart must be one of {', '.join(RESTART_TYPES)}, "
                f"not {self.restart!r}"
            )

    @staticmethod
    def of(
        name: str | None,
        capacity: int | None,
        drain: int | None,
        restart: RestartType,
    ) -> SpawnOptions:
        """The options of a ``spawn`` call: the shared ``DEFAULT_OPTIONS``
        when every one is its default (nothing to build or check again: a
        spawn with no options is the common case), else new checked ones.

        Raises:
            TypeError, ValueError: as the constructor.
        """
        defaults = name is None and capacity is None and drain is None
        if defaults and restart == "transient":
            return DEFAULT_OPTIONS
        return SpawnOptions(name, capacity, drain, restart)

    def named(self, name: str) -> SpawnOptions:
        """The same options with another name (a pool's workers)."""
        return replace(self, name=name)


#: The options of a spawn that gives none (see ``SpawnOptions.of``).
DEFAULT_OPTIONS = SpawnOptions()
