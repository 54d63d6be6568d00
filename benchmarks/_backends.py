"""Event loops to run samples on: asyncio, asyncio with uvloop, and Trio.

Every sample gets a fresh event loop through ``anyio.run``, so no sample inherits
another's loop state (ready queue, cached futures, task bookkeeping).
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import anyio

from ._registry import Sample, SampleFn

__all__ = ["BACKENDS", "Backend"]


@dataclass(frozen=True, slots=True)
class Backend:
    """One event loop flavour."""

    name: str  #: ``asyncio``, ``uvloop`` or ``trio``
    anyio_backend: str  #: the ``backend`` argument of ``anyio.run``
    requires: str | None = None  #: the module that must be importable

    def missing(self) -> str | None:
        """Why this backend cannot run here, or None if it can."""
        if self.requires and importlib.util.find_spec(self.requires) is None:
            return (
                f"{self.requires} is not installed: "
                f'pip install "anyio-actors[{self.requires}]"'
            )
        return None

    def options(self) -> dict[str, Any]:
        """The ``backend_options`` of ``anyio.run`` for this flavour."""
        if self.name == "uvloop":
            import uvloop

            factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
            return {"loop_factory": factory}
        if self.name == "asyncio":
            return {"loop_factory": asyncio.new_event_loop}
        return {}

    def run(self, sample: SampleFn, count: int) -> Sample:
        """Run one sample in a fresh event loop and return what it reports."""
        return anyio.run(
            sample,
            count,
            backend=self.anyio_backend,
            backend_options=self.options(),
        )


#: Every backend, in the order rows are run and reported.
BACKENDS: Final = (
    Backend("asyncio", "asyncio"),
    Backend("uvloop", "asyncio", requires="uvloop"),
    Backend("trio", "trio", requires="trio"),
)
