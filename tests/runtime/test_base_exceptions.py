"""A ``BaseException`` that is not an ``Exception`` surfaces from ``async with
ActorSystem()`` as itself, on every path the body may be on (running,
waiting, leaving, left), and no cancellation the body did not ask for ever
leaks out of the block (issue 22: a handler's ``Abort(BaseException)``
came out as a bare ``CancelledError`` on asyncio and uvloop, and as
``trio.Cancelled`` now and then on Trio)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import actors
from actors import Actor, ActorSystem

from ._exit_scenarios import SCENARIOS, Abort, outcome

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # The runtime logs every crash at ERROR: the point here, not noise.
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("kind", [Abort, SystemExit])
async def test_a_base_exception_surfaces_from_the_block_as_itself(
    scenario: str, kind: type[BaseException]
) -> None:
    # Several runs: which task runs first (the body or the guardian) varies
    # with the backend and the scheduling.
    for _ in range(3):
        exc = kind("raised by an actor")
        got = await outcome(scenario, exc)
        assert got is exc, f"{scenario}: got {got!r}"


class RaisesWhileHandling(Actor):
    def receive(self, message: Any) -> Any:
        try:
            raise LookupError("the context")
        except LookupError:
            raise Abort("raised while handling a LookupError") from None


async def test_the_surfaced_exception_keeps_its_own_context() -> None:
    # Raised again from __aexit__ while the body's cancellation is being
    # handled, it would otherwise be chained to the runtime's CancelledError.
    with pytest.raises(Abort) as info:
        async with ActorSystem() as system:
            system.spawn(RaisesWhileHandling).tell("go")
            await anyio.sleep_forever()
    assert isinstance(info.value.__context__, LookupError)
    assert info.value.__suppress_context__


async def test_a_cancelled_block_still_raises_its_cancellation() -> None:
    # The rule's other half: a cancellation from outside the block is the
    # caller's, and propagates to its scope.
    with anyio.CancelScope() as scope:
        async with ActorSystem():
            scope.cancel()
            await anyio.sleep_forever()
    assert scope.cancelled_caught


PROGRAM = Path(__file__).with_name("_exit_scenarios.py")


@pytest.mark.parametrize("backend", ["asyncio", "uvloop", "trio"])
def test_keyboard_interrupt_from_an_actor_surfaces_from_the_block(
    backend: str,
) -> None:
    # In a fresh interpreter: a KeyboardInterrupt torn out of the event loop
    # would end pytest itself.
    root = str(Path(actors.__file__).parents[1])  # the actors under test
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, *sys.path])}
    done = subprocess.run(
        [sys.executable, str(PROGRAM), backend],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(lines) == len(SCENARIOS), done.stdout + done.stderr
    wrong = [line for line in lines if not line.endswith(": ok")]
    assert not wrong, "\n".join(wrong)
