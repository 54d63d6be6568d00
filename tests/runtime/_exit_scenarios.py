"""Every way the body of ``async with ActorSystem()`` can be leaving, or have
left, while an actor raises a ``BaseException`` that is not an ``Exception``
(a user's ``class Abort(BaseException)``, ``SystemExit``,
``KeyboardInterrupt``): each scenario returns what came out of the block.

Imported by ``test_base_exceptions.py``; run as a script (``python
_exit_scenarios.py BACKEND``) it runs them all with ``KeyboardInterrupt`` in a
fresh interpreter, which pytest itself could not survive if one leaked out of
the event loop, and prints one line per scenario.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from actors import Actor, ActorStopped, ActorSystem


class Abort(BaseException):
    """A user's BaseException that is not an Exception."""


class RaisesInHandler(Actor):
    def receive(self, message: Any) -> Any:
        if isinstance(message, BaseException):
            raise message
        return message


class RaisesInOnStop(Actor):
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def receive(self, message: Any) -> Any:
        return message

    def on_stop(self) -> None:
        raise self.exc


class RaisesInOnStart(Actor):
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def on_start(self) -> None:
        raise self.exc


class Parent(Actor):
    """Its child raises in on_stop when the parent stops."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def on_start(self) -> None:
        self.context.spawn(RaisesInOnStop, self.exc)

    def receive(self, message: Any) -> Any:
        return message


class FailsThenRaisesInOnStop(RaisesInOnStop):
    """Fails on "fail": its restart runs the on_stop that raises."""

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise ValueError("restart me")
        return message


class Piping(Actor):
    """Its background work raises."""

    def receive(self, message: Any) -> Any:
        async def work() -> None:
            raise message

        self.context.run(work)


async def handler_while_the_body_asks(exc: BaseException) -> None:
    # The case: the ask fails with ActorStopped, the body leaves at
    # once, the system is still shutting down.
    async with ActorSystem() as system:
        ref = system.spawn(RaisesInHandler)
        with contextlib.suppress(ActorStopped):
            await ref.ask(exc)


async def handler_inside_fail_after(exc: BaseException) -> None:
    with anyio.fail_after(10):
        await handler_while_the_body_asks(exc)


async def handler_while_the_body_sleeps(exc: BaseException) -> None:
    async with ActorSystem() as system:
        system.spawn(RaisesInHandler).tell(exc)
        await anyio.sleep_forever()


async def handler_after_the_body_left(exc: BaseException) -> None:
    async with ActorSystem() as system:
        ref = system.spawn(RaisesInOnStop, exc)
        assert await ref.ask("ready") == "ready"
    # (left normally: on_stop raises during the graceful stop)


async def on_stop_of_a_stopped_actor(exc: BaseException) -> None:
    async with ActorSystem() as system:
        ref = system.spawn(RaisesInOnStop, exc)
        assert await ref.ask("ready") == "ready"
        ref.stop()
        await anyio.sleep_forever()


async def on_stop_of_a_child(exc: BaseException) -> None:
    async with ActorSystem() as system:
        parent = system.spawn(Parent, exc)
        assert await parent.ask("ready") == "ready"
        parent.stop()
        await anyio.sleep_forever()


async def on_stop_during_a_restart(exc: BaseException) -> None:
    async with ActorSystem() as system:
        system.spawn(FailsThenRaisesInOnStop, exc).tell("fail")
        await anyio.sleep_forever()


async def on_start(exc: BaseException) -> None:
    async with ActorSystem() as system:
        system.spawn(RaisesInOnStart, exc)
        await anyio.sleep_forever()


async def background_work(exc: BaseException) -> None:
    async with ActorSystem() as system:
        system.spawn(Piping).tell(exc)
        await anyio.sleep_forever()


async def system_stop_pending(exc: BaseException) -> None:
    # system.stop() first; the failure comes during that stop.
    async with ActorSystem() as system:
        ref = system.spawn(RaisesInOnStop, exc)
        assert await ref.ask("ready") == "ready"
        system.stop()
        await anyio.sleep_forever()


async def system_stop_awaited(exc: BaseException) -> None:
    async with ActorSystem() as system:
        ref = system.spawn(RaisesInOnStop, exc)
        assert await ref.ask("ready") == "ready"
        system.stop()
        await system.wait_exited()


async def with_shutdown_timeout_zero(exc: BaseException) -> None:
    async with ActorSystem(shutdown_timeout=0) as system:
        ref = system.spawn(RaisesInHandler)
        with contextlib.suppress(ActorStopped):
            await ref.ask(exc)


async def the_body_raises_too(exc: BaseException) -> None:
    # A failure nobody handled wins over the body's own exception.
    async with ActorSystem() as system:
        ref = system.spawn(RaisesInOnStop, exc)
        assert await ref.ask("ready") == "ready"
        raise ValueError("the body's own")


async def inside_an_outer_system(exc: BaseException) -> None:
    async with ActorSystem() as outer:
        outer.spawn(RaisesInHandler)
        await handler_while_the_body_asks(exc)


SCENARIOS: dict[str, Callable[[BaseException], Awaitable[None]]] = {
    f.__name__: f
    for f in (
        handler_while_the_body_asks,
        handler_inside_fail_after,
        handler_while_the_body_sleeps,
        handler_after_the_body_left,
        on_stop_of_a_stopped_actor,
        on_stop_of_a_child,
        on_stop_during_a_restart,
        on_start,
        background_work,
        system_stop_pending,
        system_stop_awaited,
        with_shutdown_timeout_zero,
        the_body_raises_too,
        inside_an_outer_system,
    )
}


async def outcome(name: str, exc: BaseException) -> BaseException | None:
    """What the scenario's block raised (None: nothing)."""
    try:
        await SCENARIOS[name](exc)
    except BaseException as raised:  # the point of the test
        return raised
    return None


def main(backend: str) -> None:
    logging.disable(logging.CRITICAL)
    name, options = (
        ("asyncio", {"use_uvloop": True}) if backend == "uvloop" else (backend, {})
    )
    for scenario in SCENARIOS:
        exc = KeyboardInterrupt()
        try:
            got = anyio.run(
                outcome, scenario, exc, backend=name, backend_options=options
            )
        except BaseException as out:  # out of the event loop
            print(f"{scenario}: escaped the event loop: {type(out).__name__}")
            continue
        verdict = "ok" if got is exc else f"got {got!r}"
        print(f"{scenario}: {verdict}")


if __name__ == "__main__":
    main(sys.argv[1])
