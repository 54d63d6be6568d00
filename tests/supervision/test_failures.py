"""A failure (an exception escaping ``on_start``, ``receive`` or ``on_restart``)
is supervised; one escaping ``on_stop`` is logged and the actor still stops.
What a restart keeps (ref, mailbox, queued messages) and what it ends (the
instance, its children, the failed message)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorSystem,
    DeadLetter,
    Directive,
    OneForOne,
    StopReason,
)

from ._support import Boom, Journal, Supervisor, Worker, worker

pytestmark = pytest.mark.anyio


async def test_a_failure_in_on_start_restarts_the_actor_through_on_restart() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", {"on_start": 1}, name="w")
        assert await ref.ask("get") == 0
        assert journal.hooks() == [("w", "on_start"), ("w", "on_restart")]
        cause = journal.of("w")[1][1]
        assert isinstance(cause, Boom) and str(cause) == "w.on_start"
        assert (system.failures, system.restarts) == (1, 1)


async def test_a_failure_in_receive_restarts_the_actor_with_a_fresh_instance() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", name="w")
        ref.tell("a")
        ref.tell("b")
        ref.tell("fail")
        assert await ref.ask("get") == 0  # the new instance handled nothing yet
        assert journal.hooks() == [
            ("w", "on_start"),
            ("w", "on_stop"),
            ("w", "on_restart"),
        ]
        assert (system.failures, system.restarts) == (1, 1)


async def test_a_failure_in_on_restart_is_supervised_like_any_other() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", {"on_restart": 2}, name="w")
        ref.tell("fail")
        assert await ref.ask("get") == 0
        # The instances whose on_restart failed never started: no on_stop.
        assert journal.hooks() == [
            ("w", "on_start"),
            ("w", "on_stop"),
            ("w", "on_restart"),
            ("w", "on_restart"),
            ("w", "on_restart"),
        ]
        causes = [e[1] for e in journal.of("w") if e[0] == "on_restart"]
        assert [str(c) for c in causes] == [
            "w failed on purpose",
            "w.on_restart",
            "w.on_restart",
        ]
        assert (system.failures, system.restarts) == (3, 3)


async def test_a_failure_in_on_stop_is_logged_and_the_actor_still_stops(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal = Journal()
    caplog.set_level(logging.INFO, logger="actors")
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", {"on_stop": 1}, name="w")
        await ref.ask("get")  # started: it has an on_stop to run
        ref.stop()
        assert await ref.join() is StopReason.NORMAL
        assert system.restarts == 0
    records = [r for r in caplog.records if r.exc_info and r.exc_info[1] is not None]
    assert len(records) == 1
    assert "/user/w" in records[0].getMessage()
    assert "on_stop" in records[0].getMessage()
    assert isinstance(records[0].exc_info[1], Boom)  # type: ignore[index]


async def test_a_failure_in_on_stop_before_a_restart_does_not_prevent_it() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", {"on_stop": 1}, name="w")
        ref.tell("fail")
        assert await ref.ask("get") == 0
        assert journal.hooks() == [
            ("w", "on_start"),
            ("w", "on_stop"),
            ("w", "on_restart"),
        ]
        assert system.restarts == 1


async def test_an_ask_whose_handler_failed_raises_the_handlers_exception() -> None:
    journal = Journal()
    error = KeyError("missing")
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", name="w")
        with pytest.raises(KeyError) as info:
            await ref.ask(("raise", error))
        assert info.value is error
        assert await ref.ask("get") == 0  # and it was restarted


async def test_the_failed_message_is_not_redelivered_and_counts_as_a_dead_letter() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        ref = system.spawn(Worker, journal, "w", name="w")
        ref.tell("fail")
        assert await ref.ask("get") == 0
        assert journal.count("w", "receive", "fail") == 1
        assert system.dead_letters.count == 1
        assert list(system.dead_letters.recent) == [
            DeadLetter(ref, "fail", "handler failed")
        ]


async def test_a_failed_ask_is_a_dead_letter_too() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Worker, Journal(), "w", name="w")
        with pytest.raises(Boom):
            await ref.ask("fail")
        assert list(system.dead_letters.recent) == [
            DeadLetter(ref, "fail", "handler failed")
        ]


async def test_messages_queued_before_a_restart_are_processed_after_it_in_order() -> (
    None
):
    journal = Journal()
    async with ActorSystem(drain=4) as system:  # the backlog spans several batches
        ref = system.spawn(Worker, journal, "w", name="w")
        # tell never yields: all of it is queued before the actor runs.
        ref.tell(0)
        ref.tell("fail")
        for i in range(1, 21):
            ref.tell(i)
        assert await ref.ask("get") == 20  # the new instance handled 1..20
        received = [e[2] for e in journal.entries if e[1] == "receive"]
        assert received == [0, "fail", *range(1, 21), "get"]
        restarted = [e[1] for e in journal.entries].index("on_restart")
        after = [e[2] for e in journal.entries[restarted + 1 :] if e[1] == "receive"]
        assert after == [*range(1, 21), "get"]


async def test_a_restart_keeps_the_ref_and_the_name() -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Worker, Journal(), "w", name="w")
        before = ref._cell
        ref.tell("fail")
        assert await ref.ask("get") == 0
        assert ref._cell is before and ref.is_alive and ref.name == "w"


class Parent(Actor):
    """Spawns the child ``kid`` on every start; fails on ``"fail"``."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def on_start(self) -> None:
        self.kid = self.context.spawn(Worker, self.journal, "kid", name="kid")
        self.journal.add("parent", "on_start", self.kid)

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise Boom("parent")
        return self.kid


async def test_the_failed_instances_children_stop_before_the_new_one_starts() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        parent = system.spawn(Parent, journal, name="parent")
        first = await parent.ask("kid")
        parent.tell("fail")
        second = await parent.ask("kid")
        assert first != second  # a new child, under the same name
        assert await first.join() is StopReason.PARENT
        assert second.name == first.name == "kid" and second.is_alive
        hooks = journal.hooks()
        assert hooks.index(("kid", "on_stop")) < hooks.index(("parent", "on_start"), 1)


class SlowStop(Actor):
    """An async ``on_stop`` that takes several scheduling rounds."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    async def on_start(self) -> None:
        self.journal.add("on_start begins")
        await anyio.lowlevel.checkpoint()
        self.journal.add("on_start ends")

    async def on_stop(self) -> None:
        self.journal.add("on_stop begins")
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        self.journal.add("on_stop ends")

    def receive(self, message: Any) -> Any:
        if message == "fail":
            raise Boom
        return "ok"


async def test_the_old_incarnations_on_stop_finishes_before_the_new_on_start() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        ref = system.spawn(SlowStop, journal)
        ref.tell("fail")
        assert await ref.ask("x") == "ok"
    assert [e[0] for e in journal.entries] == [
        "on_start begins",
        "on_start ends",
        "on_stop begins",
        "on_stop ends",
        "on_start begins",
        "on_start ends",
        "on_stop begins",
        "on_stop ends",
    ]


async def test_resume_keeps_the_instance_and_its_state() -> None:
    journal = Journal()
    strategy = OneForOne(decider=lambda exc: Directive.RESUME)
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(Worker, journal, "w", name="w")
        ref.tell("a")
        ref.tell("fail")
        ref.tell("b")
        assert await ref.ask("get") == 2  # "a" and "b": the failure kept the count
        assert journal.hooks() == [("w", "on_start")]
        assert system.restarts == 0 and system.failures == 1
        assert system.dead_letters.count == 1  # the failed message, not redelivered


async def test_a_resumed_failure_in_on_start_restarts_since_there_is_no_instance() -> (
    None
):
    journal = Journal()
    strategy = OneForOne(decider=lambda exc: Directive.RESUME)
    async with ActorSystem(strategy=strategy) as system:
        ref = system.spawn(Worker, journal, "w", {"on_start": 1}, name="w")
        assert await ref.ask("get") == 0
        assert journal.hooks() == [("w", "on_start"), ("w", "on_restart")]
        assert system.restarts == 1  # counted against the restart intensity


async def test_a_start_failing_forever_under_resume_still_hits_the_intensity() -> None:
    journal = Journal()
    strategy = OneForOne(max_restarts=2, decider=lambda exc: Directive.RESUME)
    with pytest.raises(Boom, match=r"w\.on_restart"):
        async with ActorSystem(strategy=strategy) as system:
            system.spawn(
                Worker, journal, "w", {"on_start": 1, "on_restart": 99}, name="w"
            )
            await anyio.sleep_forever()  # cancelled when the system fails
    assert journal.hooks() == [
        ("w", "on_start"),
        ("w", "on_restart"),
        ("w", "on_restart"),
    ]


async def test_a_log_record_per_failure_restart_escalation_and_stop_names_the_actor(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal = Journal()
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem() as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            OneForOne(max_restarts=1, within=60.0),
            name="sup",
        )
        children = await sup.ask("children")
        w = children["w"]
        w.tell("fail")  # restarted
        await journal.wait_count("w", "on_restart")
        w.tell("fail")  # one too many: sup escalates, the guardian restarts sup
        await journal.wait_count("sup", "on_start", count=2)
    events: dict[str, list[str]] = {}
    for record in caplog.records:
        event = getattr(record, "actor_event", None)
        if event is not None:
            events.setdefault(event, []).append(record.actor_path)  # type: ignore[attr-defined]
            assert record.actor_path in record.getMessage()  # type: ignore[attr-defined]
    assert events["failure"] == ["/user/sup/w", "/user/sup/w", "/user/sup"]
    assert events["restart"] == ["/user/sup/w", "/user/sup"]
    assert events["escalation"] == ["/user/sup"]
    assert sorted(events["stop"]) == sorted(
        ["/user/sup/w", "/user/sup/w", "/user/sup", "/user"]
    )


class SlowParent(Actor):
    """Spawns a Worker ``c``; on ``("fail after", gate)`` waits, then fails."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.handled = 0

    def on_start(self) -> None:
        self.c = self.context.spawn(Worker, self.journal, "c", name="c")

    async def receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "fail after":
            self.journal.add("parent", "waits")
            await message[1].wait()
            raise Boom("parent")
        self.handled += 1
        return self.c, self.handled


# Before the fix, the child's report reached the parent while the parent waited
# for its own directive, was dropped as stale, and the child hung suspended.
async def test_a_childs_failure_while_its_parent_awaits_a_directive_is_handled() -> (
    None
):
    journal = Journal()
    gate = anyio.Event()
    strategy = OneForOne(decider=lambda exc: Directive.RESUME)
    async with ActorSystem(strategy=strategy) as system:
        parent = system.spawn(SlowParent, journal, name="parent")
        c, _ = await parent.ask("c")
        parent.tell(("fail after", gate))
        await journal.wait_count("parent", "waits")
        c.tell("fail")  # reported to the parent, which is busy
        await journal.wait_count("c", "receive", "fail")
        gate.set()  # the parent fails too; the guardian resumes it
        assert await parent.ask("c") == (c, 2)  # resumed: its state is kept
        assert await c.ask("get") == 0  # and it restarted the child
        assert journal.hooks("c") == [
            ("c", "on_start"),
            ("c", "on_stop"),
            ("c", "on_restart"),
        ]
