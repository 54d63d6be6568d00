"""Every instance the runtime builds gets ``on_start``, then ``on_stop``,
whatever the timing (Akka's preStart/postStop rule): a stop before the
actor's task first ran included (issue 22: ``__init__`` ran inside
``spawn``, a stop or the block's exit before the first step skipped both
hooks, depending on the backend and one ``sleep(0)``). An instance whose
start hook raised gets no ``on_stop``; only a cancelled teardown skips hooks
that have not run."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import (
    Actor,
    ActorSystem,
    Backoff,
    Directive,
    OneForOne,
    StopReason,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


class Hooks(Actor):
    """Logs its hooks, as ``(event, tag)``; ``async_hooks``: they yield."""

    def __init__(self, log: list[Any], tag: str, async_hooks: bool = False) -> None:
        self.log = log
        self.tag = tag
        self.async_hooks = async_hooks
        log.append(("init", tag))

    async def on_start(self) -> None:
        if self.async_hooks:
            await anyio.lowlevel.checkpoint()
        self.log.append(("start", self.tag))

    async def on_stop(self) -> None:
        if self.async_hooks:
            await anyio.lowlevel.checkpoint()
        self.log.append(("stop", self.tag))

    def receive(self, message: Any) -> Any:
        self.log.append(("message", message))
        return message


def paired(log: list[Any], tag: str) -> list[str]:
    return [event for event, t in log if t == tag]


@pytest.mark.parametrize("async_hooks", [False, True])
async def test_a_stop_right_after_spawn_runs_on_start_then_on_stop(
    async_hooks: bool,
) -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Hooks, log, "a", async_hooks)
        ref.tell("never handled")
        ref.stop()  # before the actor's task first ran
        assert await ref.join() is StopReason.NORMAL
    assert paired(log, "a") == ["init", "start", "stop"]
    assert ("message", "never handled") not in log  # a stop is not a message


async def test_leaving_the_block_right_after_spawn_runs_both_hooks() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        system.spawn(Hooks, log, "a")
        system.spawn(Hooks, log, "b", True)
    assert paired(log, "a") == ["init", "start", "stop"]
    assert paired(log, "b") == ["init", "start", "stop"]


async def test_system_stop_right_after_spawn_runs_both_hooks() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        system.spawn(Hooks, log, "a")
        system.stop()
        await system.wait_exited()
    assert paired(log, "a") == ["init", "start", "stop"]


class SpawnsThen(Actor):
    """Spawns a child in its handler, then stops or fails in the same one."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: str) -> None:
        self.context.spawn(Hooks, self.log, "child", name="child")
        if message == "stop":
            self.context.stop()
        elif message == "fail":
            raise ValueError("the parent fails: its children stop")


@pytest.mark.parametrize("then", ["stop", "fail"])
async def test_a_parent_ending_right_after_spawning_a_child_runs_its_hooks(
    then: str,
) -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        parent = system.spawn(SpawnsThen, log)
        if then == "stop":
            await parent.ask(then)
            await parent.join()
        else:
            with pytest.raises(ValueError):
                await parent.ask(then)
    assert paired(log, "child") == ["init", "start", "stop"]


async def test_the_first_workers_of_a_pool_that_failed_to_spawn_run_both_hooks() -> (
    None
):
    log: list[Any] = []
    made = 0

    def worker() -> Hooks:
        nonlocal made
        made += 1
        if made == 3:
            raise LookupError("the third worker cannot be made")
        return Hooks(log, f"w{made}")

    async with ActorSystem() as system:
        with pytest.raises(LookupError):
            system.spawn_pool(worker, 3)
    assert paired(log, "w1") == ["init", "start", "stop"]
    assert paired(log, "w2") == ["init", "start", "stop"]


class FailsToStart(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log
        log.append("init")

    def on_start(self) -> None:
        self.log.append("start")
        raise LookupError("cannot start")

    def on_stop(self) -> None:
        self.log.append("stop")


async def test_an_instance_whose_on_start_raised_gets_no_on_stop() -> None:
    # Akka's postStop and OTP's terminate are not called for an actor whose
    # preStart / init failed: the start hook cleans up after itself.
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(FailsToStart, log, restart="temporary")
        assert isinstance(await ref.join(), LookupError)
    assert log == ["init", "start"]


async def test_an_instance_whose_on_restart_raised_gets_no_on_stop() -> None:
    log: list[Any] = []

    class Parent(Actor):
        supervisor_strategy = OneForOne(max_restarts=1, within=60.0)

        def on_start(self) -> None:
            self.context.spawn(FailsToStart, log, name="child")

    # The guardian stops what escalates to it (instead of restarting it).
    guardian = OneForOne(decider={LookupError: Directive.STOP})
    async with ActorSystem(strategy=guardian) as system:
        parent = system.spawn(Parent)
        reason = await parent.join()  # its child restarted once, then escalated
    assert isinstance(reason, LookupError)
    assert log == ["init", "start", "init", "start"]


class SlowToRestart(Actor):
    """Fails on any message; its supervisor restarts it after a backoff."""

    def __init__(self, log: list[Any], stopped: anyio.Event) -> None:
        self.log = log
        self.stopped = stopped
        log.append("init")

    def on_start(self) -> None:
        self.log.append("start")

    def on_stop(self) -> None:
        self.log.append("stop")
        self.stopped.set()

    def receive(self, message: str) -> None:
        raise ValueError(message)


async def test_a_stop_during_a_restart_backoff_builds_no_new_instance() -> None:
    log: list[Any] = []
    stopped = anyio.Event()

    class Parent(Actor):
        supervisor_strategy = OneForOne(
            backoff=Backoff(min_delay=30.0, max_delay=30.0)
        )

        def on_start(self) -> None:
            self.context.spawn(SlowToRestart, log, stopped, name="child")

        def receive(self, message: str) -> str:
            return message

    async with ActorSystem() as system:
        parent = system.spawn(Parent, name="parent")
        assert await parent.ask("ready") == "ready"  # on_start has run
        child = system.lookup("/user/parent/child")
        child.tell("fail")
        await stopped.wait()  # the failed instance has stopped: the backoff
        child.stop()
        await child.join()
    assert log == ["init", "start", "stop"]


class SpawnsThenExits(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: object) -> None:
        self.context.spawn(Hooks, self.log, "late")
        raise SystemExit(3)  # the program ends: every actor is cancelled now


async def test_a_cancelled_teardown_skips_the_hooks_of_an_actor_not_yet_run() -> None:
    # The documented exception, alike on every backend: asyncio never runs a
    # task cancelled before its first step, so Trio's does not start either.
    log: list[Any] = []
    with pytest.raises(SystemExit):
        async with ActorSystem() as system:
            system.spawn(SpawnsThenExits, log).tell("go")
            await anyio.sleep_forever()
    assert paired(log, "late") == ["init"]
