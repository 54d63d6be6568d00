"""The BehaviorTestKit agrees with the runtime: the same scenarios run through
the kit and through a real system (each message asked, failures resumed so
the state carries on, as in the kit) give the same outcomes, message by
message, and the same hooks (issue 22: the kit accepted an ``async def``
``then``, returned the ``ErrorReply`` wrapper, never ran ``on_stop``).

The kit goes through the runtime's own checks (one home per rule), so the
outcomes agree by construction; this test keeps it that way."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    Directive,
    ErrorReply,
    OneForOne,
    Result,
    Terminated,
    UnhandledMessage,
)
from actors._actor import UNHANDLED
from actors.testing import BehaviorTestKit

pytestmark = pytest.mark.anyio


async def _later() -> str:
    return "later"


async def _async_then(result: Result[Any]) -> object:
    return result


class Child(Actor):
    def receive(self, message: Any) -> Any:
        return message


#: What a message makes the actor do: ``action(actor)`` returns the reply.
ACTIONS: dict[str, Callable[[Scripted], Any]] = {
    "echo": lambda a: "echo",
    "none": lambda a: None,
    "error reply": lambda a: ErrorReply(LookupError("no such thing")),
    "fail": lambda a: a.fail(KeyError("bad")),
    "unhandled": lambda a: Actor.receive(a, "unhandled"),
    "async then": lambda a: a.context.run(_later, then=_async_then),
    "async then ask": lambda a: a.context.ask(
        a.context.self_ref, "echo", then=_async_then
    ),
    "bad then": lambda a: a.context.run(_later, then=42),  # type: ignore[arg-type]
    "bad work": lambda a: a.context.run(42),  # type: ignore[arg-type]
    "ask a signal": lambda a: a.context.ask(
        a.context.parent, Terminated(a.context.self_ref, None)
    ),
    "ask timeout 0": lambda a: a.context.ask(a.context.parent, "x", 0),
    "ask timeout str": lambda a: a.context.ask(a.context.parent, "x", "1"),  # type: ignore[arg-type]
    "ask no ref": lambda a: a.context.ask("/user/x", "x"),  # type: ignore[arg-type]
    "watch no ref": lambda a: a.context.watch("x"),  # type: ignore[arg-type]
    "stop no ref": lambda a: a.context.stop("x"),  # type: ignore[arg-type]
    "stop the parent": lambda a: a.context.stop(a.context.parent),
    "timer negative": lambda a: a.context.timers.start_single("k", "m", -1),
    "timer nan": lambda a: a.context.timers.start_single("k", "m", float("nan")),
    "timer unhashable": lambda a: a.context.timers.start_single([], "m", 1.0),
    "periodic zero": lambda a: a.context.timers.start_periodic("k", "m", 0),
    "timer": lambda a: a.context.timers.start_single("k", "m", 30.0),
    "timer active": lambda a: a.context.timers.is_active("k"),
    "receive timeout 0": lambda a: a.context.set_receive_timeout(0),
    "receive timeout inf": lambda a: a.context.set_receive_timeout(float("inf")),
    "receive timeout str": lambda a: a.context.set_receive_timeout("1"),  # type: ignore[arg-type]
    "spawn capacity 0": lambda a: a.context.spawn(Child, capacity=0),
    "spawn bad name": lambda a: a.context.spawn(Child, name="a/b"),
    "spawn bad restart": lambda a: a.context.spawn(Child, restart="often"),  # type: ignore[arg-type]
    "spawn no actor": lambda a: a.context.spawn(dict),  # type: ignore[arg-type]
    "spawn c": lambda a: a.context.spawn(Child, name="c").name,
    "pool size 0": lambda a: a.context.spawn_pool(Child, 0),
    "pool routing": lambda a: a.context.spawn_pool(Child, 2, routing="random"),  # type: ignore[arg-type]
    "pool strategy": lambda a: a.context.spawn_pool(Child, 2, strategy="x"),  # type: ignore[arg-type]
    "become": lambda a: a.become(a.other),
    "unbecome": lambda a: a.unbecome(),
    "stop": lambda a: a.context.stop(),
    "stop then spawn": lambda a: (a.context.stop(), a.context.spawn(Child)),
    "stop then run": lambda a: (a.context.stop(), a.context.run(_later)),
    "stop then timer": lambda a: (
        a.context.stop(),
        a.context.timers.start_single("late", "m", 1.0),
        a.context.timers.is_active("late"),
    )[-1],
}


class Scripted(Actor):
    """Does what each message names (see ACTIONS); logs its hooks."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def on_start(self) -> None:
        self.log.append("on_start")

    def on_stop(self) -> None:
        self.log.append("on_stop")

    def fail(self, exc: Exception) -> Any:
        raise exc

    def receive(self, message: Any) -> Any:
        return ACTIONS[message](self)

    def other(self, message: Any) -> Any:
        if message == "echo":
            return "echo from the other behaviour"
        return self.receive(message)


SCENARIOS: dict[str, list[str]] = {
    "replies": ["echo", "none", "echo"],
    "error replies and failures": ["error reply", "echo", "fail", "echo"],
    "unhandled": ["unhandled", "echo"],
    "background work": [
        "async then",
        "async then ask",
        "bad then",
        "bad work",
        "ask a signal",
        "ask timeout 0",
        "ask timeout str",
        "ask no ref",
    ],
    "refs": ["watch no ref", "stop no ref", "stop the parent", "echo"],
    "timers": [
        "timer negative",
        "timer nan",
        "timer unhashable",
        "periodic zero",
        "timer",
        "timer active",
        "receive timeout 0",
        "receive timeout inf",
        "receive timeout str",
    ],
    "spawning": [
        "spawn capacity 0",
        "spawn bad name",
        "spawn bad restart",
        "spawn no actor",
        "spawn c",
        "spawn c",
        "pool size 0",
        "pool routing",
        "pool strategy",
    ],
    "behaviours": ["echo", "become", "echo", "unbecome", "echo"],
    "stop": ["echo", "stop", "echo"],
    "stop then spawn": ["stop then spawn", "echo"],
    "stop then run": ["stop then run"],
    "stop then timer": ["stop then timer"],
}


def _outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        reply = call()
    except UnhandledMessage:
        return ("unhandled",)
    except Exception as exc:
        return ("raised", type(exc).__name__)
    if reply is UNHANDLED:
        return ("unhandled",)
    return ("reply", reply)


async def _aoutcome(ask: Any) -> tuple[Any, ...]:
    try:
        reply = await ask
    except UnhandledMessage:
        return ("unhandled",)
    except Exception as exc:
        return ("raised", type(exc).__name__)
    return ("reply", reply)


def through_the_kit(script: list[str]) -> tuple[list[tuple[Any, ...]], list[str]]:
    log: list[str] = []
    kit = BehaviorTestKit(Scripted, log)
    outcomes = [_outcome(lambda m=message: kit.run(m)) for message in script]
    return outcomes, log


async def through_a_system(
    script: list[str],
) -> tuple[list[tuple[Any, ...]], list[str]]:
    log: list[str] = []
    # Failures resumed: the state carries on, as in the kit (which does not
    # supervise).
    resume = OneForOne(decider=lambda exc: Directive.RESUME, log_failures=False)
    async with ActorSystem(strategy=resume) as system:
        ref = system.spawn(Scripted, log, name="testee")
        outcomes = []
        for message in script:
            outcomes.append(await _aoutcome(ref.ask(message)))
            if not ref.is_alive:
                await ref.join()  # its on_stop has run
        hooks = list(log)  # before the exit's own on_stop
    return outcomes, hooks


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_the_kit_and_a_system_give_the_same_outcomes(scenario: str) -> None:
    script = SCENARIOS[scenario]
    in_kit = through_the_kit(script)
    in_system = await through_a_system(script)
    assert in_kit == in_system


async def test_the_agreed_outcomes_are_the_documented_ones() -> None:
    # Pin a few, so that both sides cannot drift together unnoticed.
    outcomes, hooks = through_the_kit(SCENARIOS["error replies and failures"])
    assert outcomes == [
        ("raised", "LookupError"),
        ("reply", "echo"),
        ("raised", "KeyError"),
        ("reply", "echo"),
    ]
    outcomes, hooks = through_the_kit(SCENARIOS["background work"])
    assert [o[1] for o in outcomes] == [
        "TypeError",
        "TypeError",
        "TypeError",
        "TypeError",
        "TypeError",
        "ValueError",
        "TypeError",
        "TypeError",
    ]
    outcomes, hooks = through_the_kit(SCENARIOS["stop"])
    assert outcomes == [("reply", "echo"), ("reply", None), ("raised", "ActorStopped")]
    assert hooks == ["on_start", "on_stop"]
    assert through_the_kit(SCENARIOS["stop then timer"])[0] == [("reply", False)]


def test_stash_in_the_kit_says_to_use_the_async_kit() -> None:
    # The kit has no message loop to hand stashed messages back: a clear
    # RuntimeError, not an AttributeError from inside the runtime.
    class Stashes(Actor):
        def receive(self, message: Any) -> None:
            self.stash()

    kit = BehaviorTestKit(Stashes)
    with pytest.raises(RuntimeError, match="async kit"):
        kit.run("x")


def test_become_from_outside_the_actor_is_refused_in_the_kit_too() -> None:
    kit = BehaviorTestKit(Scripted, [])
    with pytest.raises(RuntimeError, match="own task"):
        kit.instance.become(kit.instance.other)


async def test_a_stopped_kit_and_a_stopped_actor_refuse_alike() -> None:
    kit = BehaviorTestKit(Scripted, [])
    kit.run("stop")
    with pytest.raises(ActorStopped):
        kit.run("echo")
    async with ActorSystem() as system:
        ref = system.spawn(Scripted, [])
        await ref.ask("stop")
        with pytest.raises(ActorStopped):
            await ref.ask("echo")
