"""An idle actor holds no task: its mailbox schedules a run when mail comes.

A spawned actor runs its start hook in a task; with nothing in its mailbox
that task ends and the actor waits detached (``Mailbox.wait_detached``). The
first item, a stop, a control command or the system's end starts a new run
in the system's task group, with every guarantee of a parked actor: hooks
pair, asks are answered or fail, watchers hear of the end, context variables
its hooks set stay set. An actor that has had mail gives up its task once it
has stayed idle (``test_hibernation.py``).
"""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import pytest

from actors import Actor, ActorStopped, ActorSystem
from actors._hibernation import HIBERNATION_TASK_NAME
from actors.testing import wait_all_blocked

from ._support import Watcher

pytestmark = pytest.mark.anyio

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


class Logged(Actor):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def on_start(self) -> None:
        self.log.append("start")
        WHO.set(self.context.self_ref.path)

    def receive(self, message: Any) -> Any:
        self.log.append(("got", message, WHO.get()))
        return message

    def on_stop(self) -> None:
        self.log.append("stop")


def _tasks() -> int:
    # The Trio tick task of hibernation (test_hibernation.py) left out.
    return sum(t.name != HIBERNATION_TASK_NAME for t in anyio.get_running_tasks())


async def test_idle_actors_hold_no_task_and_hot_ones_keep_theirs() -> None:
    async with ActorSystem() as system:
        await wait_all_blocked()
        before = _tasks()
        refs = [system.spawn(Logged, []) for _ in range(20)]
        await wait_all_blocked()
        assert _tasks() == before  # started, then idle: no task each
        for ref in refs:
            ref.tell("hello")
        await wait_all_blocked()
        # Each handled mail and parks with its task (a hot actor keeps it
        # until it has been idle for hibernate_after: test_hibernation.py).
        assert _tasks() == before + 20
        assert all(ref.is_alive for ref in refs)


async def test_an_idle_actor_answers_keeps_its_context_and_pairs_its_hooks() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Logged, log)
        await wait_all_blocked()
        assert log == ["start"]
        assert await ref.ask(1) == 1
    # What on_start set in its context variables, receive sees in its next
    # run; the spawner's context never leaks in.
    assert log == ["start", ("got", 1, ref.path), "stop"]


async def test_a_stop_of_an_idle_actor_runs_on_stop_and_tells_its_watcher() -> None:
    log: list[Any] = []
    seen: list[Any] = []
    done = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(Logged, log)
        system.spawn(Watcher, ref, seen, done)
        await wait_all_blocked()
        ref.stop()
        with anyio.fail_after(10):
            await ref.join()
            await done.wait()
    assert log == ["start", "stop"]
    assert seen == [ref]


async def test_mail_queued_before_the_first_run_is_handled_by_it() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Logged, log)
        for i in range(3):
            ref.tell(i)
        assert await ref.ask("last") == "last"
    assert [entry[1] for entry in log if isinstance(entry, tuple)] == [
        0,
        1,
        2,
        "last",
    ]


async def test_a_cancelled_system_ends_its_idle_actors() -> None:
    log: list[Any] = []
    with anyio.CancelScope() as scope:
        async with ActorSystem() as system:
            refs = [system.spawn(Logged, log) for _ in range(5)]
            await wait_all_blocked()
            scope.cancel()
            await anyio.sleep_forever()
    assert not any(ref.is_alive for ref in refs)
    with pytest.raises(ActorStopped):
        await refs[0].ask("late")


async def test_a_thread_reaches_an_idle_actor() -> None:
    log: list[Any] = []
    async with ActorSystem() as system:
        ref = system.spawn(Logged, log)
        await wait_all_blocked()
        with anyio.fail_after(10):
            reply = await anyio.to_thread.run_sync(
                lambda: system.from_thread.ask(ref, "from a thread")
            )
    assert reply == "from a thread"
    assert log[-1] == "stop"


async def test_many_idle_actors_stop_children_first_at_the_exit() -> None:
    order: list[str] = []

    class Node(Actor):
        def __init__(self, depth: int) -> None:
            self.depth = depth

        def on_start(self) -> None:
            if self.depth:
                for _ in range(2):
                    self.context.spawn(Node, self.depth - 1)

        def receive(self, message: Any) -> None:
            pass

        def on_stop(self) -> None:
            order.append(self.context.self_ref.path)

    async with ActorSystem() as system:
        system.spawn(Node, 3, name="root")
        await wait_all_blocked()
    assert len(order) == 15
    assert order[-1] == "/user/root"
    for i, path in enumerate(order):  # every child before its parent
        parent = path.rsplit("/", 1)[0]
        if parent != "/user":
            assert order.index(parent) > i
