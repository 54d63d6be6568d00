"""Teardown of actors that never finish, and argument errors that name the argument."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, Directive, OneForOne

pytestmark = pytest.mark.anyio


class Stuck(Actor):
    """Blocks forever on "block", after telling the test it has begun."""

    def __init__(self, begun: anyio.Event) -> None:
        self.begun = begun

    async def receive(self, message: Any) -> None:
        if message == "block":
            self.begun.set()
            await anyio.sleep_forever()


class Idle(Actor):
    def receive(self, message: Any) -> None:
        pass


async def test_shutdown_timeout_bounds_a_normal_exit_past_a_stuck_handler() -> None:
    begun = anyio.Event()
    with anyio.fail_after(10):  # a hang fails here instead of stalling the suite
        async with ActorSystem(shutdown_timeout=0.05) as system:
            ref = system.spawn(Stuck, begun)
            ref.tell("block")
            ref.tell("queued")
            await begun.wait()
    assert not ref.is_alive
    # The message in hand and the one behind it are counted, never lost silently.
    assert [letter.message for letter in system.dead_letters.recent] == [
        "block",
        "queued",
    ]


async def test_a_cancelled_exit_counts_the_batch_in_hand_as_dead_letters() -> None:
    begun = anyio.Event()
    with anyio.CancelScope() as scope:
        async with ActorSystem() as system:
            ref = system.spawn(Stuck, begun)
            ref.tell("block")
            ref.tell("queued")  # taken in the same batch as "block"
            await begun.wait()
            scope.cancel()
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert system.dead_letters.count == 2
    assert {letter.message for letter in system.dead_letters.recent} == {
        "block",
        "queued",
    }


async def test_drain_and_pool_size_errors_name_the_argument() -> None:
    async with ActorSystem() as system:
        with pytest.raises(ValueError, match=r"^drain must be at least 1"):
            system.spawn(Idle, drain=0)
        with pytest.raises(ValueError, match=r"^size must be at least 1"):
            system.spawn_pool(Idle, 0)
        with pytest.raises(TypeError, match=r"^size must be an integer"):
            system.spawn_pool(Idle, 1.5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^drain must be at least 1"):
            system.spawn_pool(Idle, 2, drain=0)
        with pytest.raises(TypeError, match="name is a string"):
            system.spawn(Idle, name=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^drain must be at least 1"):
        ActorSystem(drain=0)


def test_shutdown_timeout_must_be_a_non_negative_number() -> None:
    with pytest.raises(TypeError, match="shutdown_timeout"):
        ActorSystem(shutdown_timeout="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="shutdown_timeout"):
        ActorSystem(shutdown_timeout=-1)
    assert ActorSystem(shutdown_timeout=0).shutdown_timeout == 0


def test_a_decider_mapping_must_map_exception_classes_to_directives() -> None:
    with pytest.raises(TypeError, match="exception classes"):
        OneForOne(decider={1: Directive.STOP})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="must be a Directive"):
        OneForOne(decider={ValueError: "stop"})  # type: ignore[dict-item]
    assert (
        OneForOne(decider={ValueError: Directive.STOP}).decide(ValueError())
        is Directive.STOP
    )
