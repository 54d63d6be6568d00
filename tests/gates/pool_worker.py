"""The worker class of the pool-job call gate (``measure_remote_calls.py``):
a module of its own, so the gate's node can host it by name."""

from __future__ import annotations

from typing import Any

from actors import Actor

__all__ = ["Idle"]


class Idle(Actor):
    """Does nothing with its jobs: what a pool job costs is the transfer."""

    def receive(self, message: Any) -> None:
        return None
