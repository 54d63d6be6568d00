"""A handler that fails counts its message as a dead letter, reason
``"handler failed"``, whatever its kind: a told message, a timer's, a piped
result (with or without ``then``, or ``then`` itself failing), a
``Terminated`` (to ``receive`` or ``on_terminated``), a ``ReceiveTimeout``,
a stashed signal handed back (issue 22: only told messages were)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorSystem,
    DeadLetter,
    Directive,
    OneForOne,
    ReceiveTimeout,
    Result,
    Terminated,
)

pytestmark = pytest.mark.anyio


class Fails(Exception):
    pass


def failing(letters: list[DeadLetter]) -> list[tuple[Any, str]]:
    return [
        (d.message, d.recipient.path) for d in letters if d.reason == "handler failed"
    ]


class Victim(Actor):
    """Starts what ``kind`` names in on_start; its handler raises on every
    message of that kind (the actor is resumed: one failure each)."""

    def __init__(self, kind: str, done: anyio.Event) -> None:
        self.kind = kind
        self.done = done
        self.stashed = False

    def on_start(self) -> None:
        context = self.context
        kind = self.kind
        if kind == "single timer":
            context.timers.start_single("t", "tick", 0)
        elif kind == "periodic timer":
            context.timers.start_periodic("t", "tick", 0.001)
        elif kind == "piped":
            context.run(self.work)
        elif kind == "piped then":
            context.run(self.work, then=lambda result: ("made", result.value))
        elif kind == "then fails":
            context.run(self.work, then=self.bad_then)
        elif kind == "terminated":
            context.watch(context.spawn(Actor, name="watched"))
            context.child("watched").stop()  # type: ignore[union-attr]
        elif kind == "receive timeout":
            context.set_receive_timeout(0.001)
        elif kind == "stashed timer":
            context.timers.start_single("t", "tick", 0)

    async def work(self) -> str:
        return "piped value"

    def bad_then(self, result: Result[str]) -> object:
        self.done.set()
        raise Fails("then")

    def receive(self, message: Any) -> None:
        if self.kind == "stashed timer" and not self.stashed:
            self.stashed = True
            self.stash()  # handed back at once, to this handler
            self.unstash_all()
            return
        if self.kind == "told" or not isinstance(message, str) or message == "tick":
            self.done.set()
            self.context.timers.cancel_all()
            self.context.set_receive_timeout(None)
            raise Fails(repr(message))


EXPECTED = {
    "told": "hello",
    "single timer": "tick",
    "periodic timer": "tick",
    "piped": Result("piped value"),
    "piped then": ("made", "piped value"),
    "then fails": Result("piped value"),
    "receive timeout": ReceiveTimeout(),
    "stashed timer": "tick",
}


@pytest.mark.parametrize("kind", [*EXPECTED, "terminated"])
async def test_a_failed_handler_counts_its_message_whatever_its_kind(
    kind: str,
) -> None:
    letters: list[DeadLetter] = []
    done = anyio.Event()
    resume = OneForOne(decider={Fails: Directive.RESUME}, log_failures=False)
    async with ActorSystem(strategy=resume) as system:
        system.dead_letters.subscribe(letters.append)
        ref = system.spawn(Victim, kind, done, name="victim")
        if kind == "told":
            ref.tell("hello")
        with anyio.fail_after(10):
            await done.wait()  # set by the handler, which fails at once
    failed = failing(letters)
    assert len(failed) == 1, letters
    message, path = failed[0]
    assert path == "/user/victim"
    if kind == "terminated":
        assert isinstance(message, Terminated)
        assert message.ref.path == "/user/victim/watched"
    else:
        assert message == EXPECTED[kind]


class OnTerminatedFails(Actor):
    def __init__(self, done: anyio.Event) -> None:
        self.done = done

    def on_start(self) -> None:
        child = self.context.spawn(Actor, name="watched")
        self.context.watch(child)
        child.stop()

    def on_terminated(self, terminated: Terminated) -> None:
        self.done.set()
        raise Fails("on_terminated")


async def test_a_failed_on_terminated_counts_its_terminated() -> None:
    letters: list[DeadLetter] = []
    done = anyio.Event()
    resume = OneForOne(decider={Fails: Directive.RESUME}, log_failures=False)
    async with ActorSystem(strategy=resume) as system:
        system.dead_letters.subscribe(letters.append)
        system.spawn(OnTerminatedFails, done, name="watcher")
        with anyio.fail_after(10):
            await done.wait()
    ((message, path),) = failing(letters)
    assert isinstance(message, Terminated) and path == "/user/watcher"
