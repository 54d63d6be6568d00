"""Death watch: exactly one ``Terminated(ref, reason)`` per watched actor, as an
uncounted signal in FIFO order with the messages, none after ``unwatch``, and no
registry left behind."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Directive,
    MailboxFull,
    OneForOne,
    StopReason,
    Terminated,
)

from ._support import Boom, Journal, Supervisor, Worker, worker

pytestmark = pytest.mark.anyio


def watched_cells(ref: Any) -> set[Any]:
    """The cells ``ref``'s actor watches (runtime internals, for leak checks)."""
    extras = ref._cell.extras
    return set() if extras is None else set(extras.watching)


def watcher_cells(ref: Any) -> set[Any]:
    """The cells watching ``ref``'s actor."""
    extras = ref._cell.extras
    return set() if extras is None else set(extras.watchers)


class Watcher(Actor):
    """Journals what it receives. Commands: ``("watch", ref)``, ``("watch
    twice", ref)``, ``("unwatch", ref)``, ``("block", event)`` (wait for it),
    ``("block then unwatch", event, ref)``, ``"sync"`` (replies)."""

    def __init__(self, journal: Journal, who: str = "watcher") -> None:
        self.journal = journal
        self.who = who

    def on_terminated(self, terminated: Terminated) -> None:
        self.journal.add(self.who, "terminated", terminated.ref, terminated.reason)

    async def receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "watch":
            self.context.watch(message[1])
        elif isinstance(message, tuple) and message[0] == "unwatch":
            self.context.unwatch(message[1])
        elif isinstance(message, tuple) and message[0] == "watch twice":
            self.context.watch(message[1])
            self.context.watch(message[1])
        elif isinstance(message, tuple) and message[0] == "block":
            self.journal.add(self.who, "blocked")
            await message[1].wait()
        elif isinstance(message, tuple) and message[0] == "block then unwatch":
            self.journal.add(self.who, "blocked")
            await message[1].wait()
            self.context.unwatch(message[2])
        elif message != "sync":
            self.journal.add(self.who, "message", message)
        return "synced"


class PlainWatcher(Watcher):
    """Without ``on_terminated``: ``Terminated`` goes to ``receive``."""

    on_terminated = None  # type: ignore[assignment]

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Terminated):
            self.journal.add(self.who, "received", message)
            return None
        return await super().receive(message)


class Sender(Actor):
    """On ``(to, n, how)``: sends ``to`` the messages 0..n-1, then ends as
    ``how`` says ("stop" itself, or "fail")."""

    async def receive(self, message: Any) -> None:
        to, n, how = message
        for i in range(n):
            await to.send(i)
        if how == "stop":
            self.context.stop()
        else:
            raise Boom("sender")


def terminated(journal: Journal, who: str = "watcher") -> list[tuple[Any, ...]]:
    return [e[2:] for e in journal.entries if e[:2] == (who, "terminated")]


async def watching(
    system: ActorSystem, journal: Journal, *targets: ActorRef[Any], **kw: Any
) -> ActorRef[Any]:
    watcher = system.spawn(Watcher, journal, **kw)
    for target in targets:
        await watcher.ask(("watch", target))
    return watcher


async def test_a_watcher_gets_exactly_one_terminated_when_the_watched_actor_stops() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target)
        target.stop()
        assert await target.join() is StopReason.NORMAL
        await watcher.ask("sync")  # anything queued before this is handled
        assert terminated(journal) == [(target, StopReason.NORMAL)]


async def test_the_reason_is_the_failures_exception_when_the_actor_failed() -> None:
    journal = Journal()
    error = Boom("fatal")
    async with ActorSystem(
        strategy=OneForOne(decider=lambda e: Directive.STOP)
    ) as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target)
        target.tell(("raise", error))
        assert await target.join() is error
        await watcher.ask("sync")
        assert terminated(journal) == [(target, error)]
        assert terminated(journal)[0][1] is error


async def test_the_reason_is_stopped_by_parent_when_the_parent_stopped() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        sup = system.spawn(Supervisor, journal, "sup", {"k": worker(journal, "k")})
        kid = (await sup.ask("children"))["k"]
        watcher = await watching(system, journal, kid, sup)
        sup.stop()
        await sup.join()
        await watcher.ask("sync")
        assert terminated(journal) == [
            (kid, StopReason.PARENT),
            (sup, StopReason.NORMAL),
        ]


async def test_join_returns_how_the_actor_ended() -> None:
    journal = Journal()
    async with ActorSystem(
        strategy=OneForOne(decider=lambda e: Directive.STOP)
    ) as system:
        normal = system.spawn(Worker, journal, "n")
        failing = system.spawn(Worker, journal, "f")
        sup = system.spawn(Supervisor, journal, "sup", {"k": worker(journal, "k")})
        kid = (await sup.ask("children"))["k"]
        other = system.spawn(Supervisor, journal, "sup2", {"k": worker(journal, "k2")})
        nested = (await other.ask("children"))["k"]
        normal.stop()
        failing.tell("fail")
        sup.stop()
        assert await normal.join() is StopReason.NORMAL
        assert isinstance(await failing.join(), Boom)
        assert await kid.join() is StopReason.PARENT
    assert await other.join() is StopReason.SYSTEM
    assert await nested.join() is StopReason.SYSTEM  # also below the top level
    assert await normal.join() is StopReason.NORMAL  # join() after the end: at once


async def test_terminated_comes_after_every_message_the_watched_actor_sent() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        watcher = system.spawn(Watcher, journal, capacity=4)  # the sender waits
        for how in ("stop", "fail"):
            journal.entries.clear()
            sender = system.spawn(Sender, restart="temporary")
            await watcher.ask(("watch", sender))
            sender.tell((watcher, 100, how))
            await sender.join()
            await watcher.ask("sync")
            kinds = [e[1:3] if e[1] == "message" else (e[1],) for e in journal.entries]
            assert kinds == [*(("message", i) for i in range(100)), ("terminated",)]


async def test_a_full_mailbox_never_loses_terminated() -> None:
    journal = Journal()
    gate = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target, capacity=1)
        watcher.tell(("block", gate))
        await journal.wait_count("watcher", "blocked")
        watcher.tell("queued")  # the mailbox is full now
        with pytest.raises(MailboxFull):
            watcher.tell("no room")
        target.stop()
        await target.join()  # its Terminated went in regardless of the quota
        with pytest.raises(MailboxFull):
            watcher.tell("still no room")
        gate.set()
        await watcher.ask("sync")
        assert [e[1:3] for e in journal.entries if e[0] == "watcher"] == [
            ("blocked",),
            ("message", "queued"),
            ("terminated", target),
        ]


async def test_watching_a_dead_actor_delivers_terminated_at_once() -> None:
    journal = Journal()
    async with ActorSystem(
        strategy=OneForOne(decider=lambda e: Directive.STOP)
    ) as system:
        stopped = system.spawn(Worker, journal, "s")
        failed = system.spawn(Worker, journal, "f")
        stopped.stop()
        failed.tell("fail")
        error = await failed.join()
        await stopped.join()
        watcher = system.spawn(Watcher, journal)
        await watcher.ask(("watch", stopped))
        await watcher.ask(("watch", failed))
        # Delivered before the next message: at once, not on some later event.
        await watcher.ask("sync")
        assert terminated(journal) == [(stopped, StopReason.NORMAL), (failed, error)]


async def test_watching_twice_delivers_once() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target, target)
        target.stop()
        await target.join()
        await watcher.ask("sync")
        assert terminated(journal) == [(target, StopReason.NORMAL)]


async def test_watching_a_dead_actor_twice_delivers_once() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        target.stop()
        await target.join()
        watcher = system.spawn(Watcher, journal)
        await watcher.ask(("watch twice", target))
        await watcher.ask("sync")
        assert len(terminated(journal)) == 1


async def test_after_unwatch_no_terminated_arrives() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target)
        await watcher.ask(("unwatch", target))
        target.stop()
        await target.join()
        await watcher.ask("sync")
        assert terminated(journal) == []
        assert not watched_cells(watcher) and not watcher_cells(target)


async def test_after_unwatch_no_terminated_arrives_even_one_already_queued() -> None:
    journal = Journal()
    gate = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target)
        watcher.tell(("block then unwatch", gate, target))
        await journal.wait_count("watcher", "blocked")
        target.stop()
        await target.join()  # Terminated is queued for the watcher now
        gate.set()
        await watcher.ask("sync")
        assert terminated(journal) == []


async def test_unwatch_then_watch_again_delivers_exactly_one() -> None:
    journal = Journal()
    gate = anyio.Event()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target)
        watcher.tell(("block then unwatch", gate, target))
        watcher.tell(("watch", target))
        await journal.wait_count("watcher", "blocked")
        target.stop()
        await target.join()
        gate.set()
        await watcher.ask("sync")
        assert terminated(journal) == [(target, StopReason.NORMAL)]


async def test_a_restart_is_not_a_termination() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = await watching(system, journal, target)
        target.tell("fail")
        await target.ask("get")  # restarted
        await watcher.ask("sync")
        assert terminated(journal) == []
        target.stop()
        await target.join()
        await watcher.ask("sync")
        assert terminated(journal) == [(target, StopReason.NORMAL)]


async def test_a_stopped_watcher_is_removed_from_every_registry() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        targets = [system.spawn(Worker, journal, f"t{i}") for i in range(3)]
        for cycle in range(300):
            watcher = await watching(system, journal, *targets, name=f"w{cycle}")
            # and a target that dies while watched, its Terminated still queued
            doomed = system.spawn(Worker, journal, "d")
            await watcher.ask(("watch", doomed))
            gate = anyio.Event()
            watcher.tell(("block", gate))
            doomed.stop()
            await doomed.join()
            watcher.stop()  # before it handles the Terminated
            gate.set()
            await watcher.join()
            assert not watched_cells(watcher) and not watcher_cells(watcher)
        for target in targets:
            assert watcher_cells(target) == set()
            assert watched_cells(target) == set()
        assert set(system._runtime.guardian.children) == {t.name for t in targets}  # type: ignore[union-attr]


async def test_a_delivered_terminated_leaves_no_registry_behind() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        watcher = system.spawn(Watcher, journal)
        for _ in range(300):
            target = system.spawn(Worker, journal, "t")
            await watcher.ask(("watch", target))
            target.stop()
            await target.join()
        await watcher.ask("sync")
        assert len(terminated(journal)) == 300
        assert watched_cells(watcher) == set() and watcher_cells(watcher) == set()


async def test_without_on_terminated_the_signal_goes_to_receive() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        target = system.spawn(Worker, journal, "t")
        watcher = system.spawn(PlainWatcher, journal)
        await watcher.ask(("watch", target))
        target.stop()
        await target.join()
        await watcher.ask("sync")
        assert journal.of("watcher") == [
            ("received", Terminated(target, StopReason.NORMAL))
        ]


class Parent(Actor):
    """Spawns and watches the children named in ``names`` on every start."""

    def __init__(self, journal: Journal, names: str) -> None:
        self.journal = journal
        self.names = names

    def on_start(self) -> None:
        for name in self.names:
            self.context.watch(
                self.context.spawn(Worker, self.journal, name, name=name)
            )
        self.journal.add("parent", "started", dict(self.kids()))

    def kids(self) -> dict[str, ActorRef[Any]]:
        return {ref.name: ref for ref in self.context.children}

    def on_terminated(self, terminated: Terminated) -> None:
        self.journal.add("parent", "terminated", terminated.ref, terminated.reason)

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise Boom("parent")
        if isinstance(message, tuple) and message[0] == "stop":
            self.context.stop(message[1])
        return self.kids()


async def test_a_parent_watching_its_children_gets_each_ones_terminated() -> None:
    journal = Journal()
    error = Boom("child")
    strategy = OneForOne(decider=lambda e: Directive.STOP)
    Parent.supervisor_strategy = None
    async with ActorSystem() as system:
        parent = system.spawn(
            type("P", (Parent,), {"supervisor_strategy": strategy}), journal, "abc"
        )
        kids = await parent.ask("kids")
        kids["a"].stop()
        kids["b"].tell(("raise", error))
        await parent.ask(("stop", kids["c"]))
        for kid in kids.values():
            await kid.join()
        await parent.ask("sync")
        got = {
            e[2].name: e[3]
            for e in journal.entries
            if e[:2] == ("parent", "terminated")
        }
        assert got == {"a": StopReason.NORMAL, "b": error, "c": StopReason.PARENT}
        assert journal.count("parent", "terminated") == 3
        assert await parent.ask("kids") == {}


async def test_a_restarting_parent_gets_the_terminated_of_children_it_stopped() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        parent = system.spawn(Parent, journal, "ab")
        old = await parent.ask("kids")
        parent.tell("fail")
        new = await parent.ask("kids")
        # The names are free again: the new incarnation reused them.
        assert set(new) == {"a", "b"} and all(new[n] != old[n] for n in "ab")
        assert all(ref.is_alive for ref in new.values())
        await parent.ask("sync")
        got = [
            (e[2], e[3]) for e in journal.entries if e[:2] == ("parent", "terminated")
        ]
        assert got == [(old["b"], StopReason.PARENT), (old["a"], StopReason.PARENT)]
        # Its watches of the new children work as any other.
        new["a"].stop()
        await new["a"].join()
        await parent.ask("sync")
        assert journal.count("parent", "terminated") == 3
