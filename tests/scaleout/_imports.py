"""A hosted module that imports actor classes it does not define (the
node agent among them): none of them may be spawned through it."""

from __future__ import annotations

from typing import Any

from actors import Actor
from actors.node import host
from actors.remote.scaleout._agent import NodeAgent

__all__ = ["Actor", "Defined", "NodeAgent", "host"]


class Defined(Actor):
    """The one class this module hosts."""

    def receive(self, message: Any) -> Any:
        return message
