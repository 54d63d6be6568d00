"""Behaviours: ``become``/``unbecome`` change the handler of the next messages
(Akka's become, OTP's gen_statem states), within a batch too, for sync and
async handlers; a restart starts from ``receive``; assigning ``self.receive``
is refused instead of ignored."""

from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorSystem,
    Directive,
    OneForOne,
    Result,
    UnhandledMessage,
)

from ._support import Hold

pytestmark = pytest.mark.anyio


class Door(Actor):
    """Closed: "open" opens it; open: "close" closes it. Replies with its
    state and logs what each behaviour saw."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def receive(self, message: Any) -> Any:
        return self.closed(message)

    def closed(self, message: Any) -> Any:
        self.log.append(("closed", message))
        if message == "open":
            self.become(self.opened)
        return "closed"

    async def opened(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        self.log.append(("open", message))
        if message == "close":
            self.become(self.closed)
        return "open"


async def test_become_sends_the_next_message_to_the_new_handler() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        door = system.spawn(Door, log)
        assert await door.ask("knock") == "closed"
        assert await door.ask("open") == "closed"  # the switch is for the next
        assert await door.ask("knock") == "open"  # async handler now
        assert await door.ask("close") == "open"
        assert await door.ask("knock") == "closed"  # sync again
    assert log == [
        ("closed", "knock"),
        ("closed", "open"),
        ("open", "knock"),
        ("open", "close"),
        ("closed", "knock"),
    ]


class HeldDoor(Door):
    async def receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            message.entered.set()
            await message.release.wait()
            return None
        return self.closed(message)


async def test_become_takes_effect_for_the_next_message_of_the_same_batch() -> None:
    # Everything is queued while the actor is held, so one wake takes it all:
    # the switch must not wait for the next batch.
    log: list[Any] = []
    async with ActorSystem(drain=64) as system:
        door = system.spawn(HeldDoor, log)
        hold = Hold()
        door.tell(hold)
        await hold.entered.wait()
        for message in ("a", "open", "b", "close", "c", "open", "d"):
            door.tell(message)
        hold.release.set()
        assert await door.ask("last") == "open"
    assert log == [
        ("closed", "a"),
        ("closed", "open"),
        ("open", "b"),
        ("open", "close"),
        ("closed", "c"),
        ("closed", "open"),
        ("open", "d"),
        ("open", "last"),
    ]


class Stack(Actor):
    """"push:x" pushes a behaviour that answers x; "pop" unbecomes."""

    def receive(self, message: Any) -> Any:
        return self.handle("base", message)

    def handle(self, name: str, message: Any) -> Any:
        if isinstance(message, str) and message.startswith("push:"):
            label = message[5:]
            self.become(functools.partial(self.handle, label), discard_old=False)
        elif isinstance(message, str) and message.startswith("swap:"):
            label = message[5:]
            self.become(functools.partial(self.handle, label))
        elif message == "pop":
            self.unbecome()
        return name


async def test_unbecome_returns_to_the_behaviour_pushed_below() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Stack)
        replies = [
            await ref.ask(m)
            for m in ("push:a", "push:b", "x", "pop", "x", "pop", "x")
        ]
        assert replies == ["base", "a", "b", "b", "a", "a", "base"]


async def test_become_with_discard_old_replaces_the_current_behaviour() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Stack)
        replies = [
            await ref.ask(m)
            for m in ("push:a", "swap:b", "x", "pop", "x")
        ]
        # b replaced a, so popping b goes back to receive
        assert replies == ["base", "a", "b", "b", "base"]


async def test_unbecome_at_the_initial_behaviour_does_nothing() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Stack)
        assert [await ref.ask(m) for m in ("pop", "pop", "x")] == [
            "base",
            "base",
            "base",
        ]


class Fragile(Door):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return self.closed(message)

    async def opened(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return await super().opened(message)


async def test_a_restart_starts_from_the_initial_behaviour() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Fragile, log)
        await ref.ask("open")
        assert await ref.ask("x") == "open"
        ref.tell("boom")  # restarted by the default strategy
        assert await ref.ask("x") == "closed"
        assert system.restarts == 1


class SwitchesThenFails(Door):
    def receive(self, message: Any) -> Any:
        if message == "open-and-fail":
            self.become(self.opened)
            raise ValueError("after the switch")
        return self.closed(message)


async def test_a_switch_made_before_a_resumed_failure_holds() -> None:
    log: list[Any] = []
    strategy = OneForOne(decider={ValueError: Directive.RESUME})
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(SwitchesThenFails, log)
        ref.tell("open-and-fail")
        assert await ref.ask("x") == "open"
        assert system.restarts == 0


class Ticking(Actor):
    def __init__(self, seen: list[Any], done: anyio.Event) -> None:
        self.seen = seen
        self.done = done

    def on_start(self) -> None:
        self.become(self.ticking)
        self.context.timers.start_single("t", "tick", 0)

    def receive(self, message: Any) -> Any:
        self.seen.append(("receive", message))

    def ticking(self, message: Any) -> Any:
        self.seen.append(("ticking", message))
        self.done.set()


async def test_timer_messages_go_to_the_current_behaviour() -> None:
    seen: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(Ticking, seen, done)
        await done.wait()
    assert seen == [("ticking", "tick")]


class FromInit(Actor):
    def __init__(self) -> None:
        self.become(self.ready)

    def receive(self, message: Any) -> Any:
        return "receive"

    def ready(self, message: Any) -> Any:
        return "ready"


async def test_become_in_init_applies_to_the_first_message() -> None:
    async with ActorSystem() as system:
        assert await system.spawn(FromInit).ask("x") == "ready"


def _async(function: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    # A sync wrapper around an async function (as ordinary decorators make).
    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        return function(*args)

    return wrapper


class Decorated(Actor):
    def receive(self, message: Any) -> Any:
        self.become(self.later)
        return "receive"

    @_async
    async def later(self, message: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        return f"later {message}"


async def test_a_coroutine_from_a_sync_behaviour_is_awaited() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Decorated)
        assert await ref.ask(1) == "receive"
        assert await ref.ask(2) == "later 2"


class Lambdas(Actor):
    def receive(self, message: Any) -> Any:
        self.become(lambda m: ("lambda", m))
        return "receive"


async def test_any_callable_can_be_a_behaviour() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Lambdas)
        assert await ref.ask(1) == "receive"
        assert await ref.ask(2) == ("lambda", 2)


class PassesOn(Actor):
    def receive(self, message: Any) -> Any:
        self.become(self.picky)
        return "ok"

    def picky(self, message: Any) -> Any:
        return super().receive(message)


async def test_a_behaviour_can_pass_a_message_on_to_actor_receive() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(PassesOn)
        await ref.ask("first")
        with pytest.raises(UnhandledMessage):
            await ref.ask("second")
        assert system.dead_letters.recent[-1].reason == "unhandled"


def test_become_rejects_a_handler_that_is_not_callable() -> None:
    door = Door([])
    with pytest.raises(TypeError, match=r"become\(\) takes a callable.*str"):
        door.become("closed")  # type: ignore[arg-type]


def test_assigning_receive_raises_and_names_become() -> None:
    door = Door([])
    with pytest.raises(AttributeError, match=r"self\.become"):
        door.receive = door.opened  # type: ignore[method-assign]
    plain = Actor()
    with pytest.raises(AttributeError, match=r"self\.become"):
        plain.receive = print  # type: ignore[method-assign]


def test_behaviour_works_on_an_instance_outside_the_runtime() -> None:
    # A unit test drives the behaviours without a system.
    door = Door([])
    assert door.behaviour == door.receive
    assert door.behaviour("open") == "closed"
    door.become(door.opened)
    assert door.behaviour == door.opened
    door.unbecome()
    assert door.behaviour == door.receive


def test_the_class_attribute_receive_is_still_the_function() -> None:
    function = Door.__dict__["receive"].function
    assert Door.receive is function
    assert Door([]).receive.__func__ is function


class Dispatching(Actor):
    @functools.singledispatchmethod
    def receive(self, message: Any) -> Any:
        return "other"

    @receive.register
    def _(self, message: int) -> Any:
        self.become(self.after)
        return "int"

    def after(self, message: Any) -> Any:
        return "after"


async def test_a_singledispatchmethod_receive_still_dispatches() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Dispatching)
        assert await ref.ask("x") == "other"
        assert await ref.ask(1) == "int"
        assert await ref.ask("y") == "after"


class Changes(Actor):
    """Answers "which"; "from work" changes its behaviour from its
    background work, "from a thread" from another thread; each reports what
    the call raised."""

    outcome: BaseException | None = None

    def receive(self, message: Any) -> Any:
        if message == "which":
            return "receive"
        if message == "from work":

            async def work() -> None:
                self.become(self.other)

            self.context.run(work)
            return None
        if message == "from a thread":
            return self._in_a_thread()
        if isinstance(message, Result):  # the work's outcome
            self.outcome = message.error
            return None
        if message == "outcome":
            return self.outcome
        return None

    def _in_a_thread(self) -> BaseException | None:
        seen: list[BaseException | None] = []

        def call() -> None:
            try:
                self.become(self.other)
            except BaseException as exc:
                seen.append(exc)
            else:
                seen.append(None)

        thread = threading.Thread(target=call)
        thread.start()
        thread.join()
        return seen[0]

    def other(self, message: Any) -> Any:
        return "other"


async def test_become_from_another_task_or_thread_is_refused_as_stash_is() -> None:
    # Issue 22: accepted silently (the loop could not see it), where stash()
    # refuses the same misuse.
    async with ActorSystem() as system:
        ref = system.spawn(Changes)
        error = await ref.ask("from a thread")
        assert isinstance(error, RuntimeError) and "own task" in str(error)
        await ref.ask("from work")
        with anyio.fail_after(10):
            while (error := await ref.ask("outcome")) is None:
                pass
        assert isinstance(error, RuntimeError) and "own task" in str(error)
        assert await ref.ask("which") == "receive"  # nothing changed


async def test_another_actor_cannot_change_an_actors_behaviour() -> None:
    instances: list[Door] = []

    class Meddler(Actor):
        def receive(self, message: Any) -> Any:
            target = instances[0]
            for call in (
                lambda: target.become(target.opened),
                target.unbecome,
                target.unstash_all,
                target.unstash,
            ):
                try:
                    call()
                except RuntimeError:
                    continue
                return "accepted"
            return "refused"

    def door() -> Door:
        instance = Door([])
        instances.append(instance)
        return instance

    async with ActorSystem() as system:
        system.spawn(door)
        meddler = system.spawn(Meddler)
        assert await meddler.ask("go") == "refused"
