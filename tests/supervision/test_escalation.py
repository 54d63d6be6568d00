"""Escalation: a supervisor that gives up fails itself with the child's
exception; at the top the system shuts down and that exception surfaces from
``async with ActorSystem()``."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem, Directive, OneForOne, StopReason

from ._support import Boom, Journal, Supervisor, worker

pytestmark = pytest.mark.anyio

ESCALATE = OneForOne(decider=lambda exc: Directive.ESCALATE)
GIVE_UP = OneForOne(max_restarts=0)  # the first failure exceeds the intensity


def three_levels(journal: Journal, strategy: OneForOne) -> tuple[Any, tuple[Any, ...]]:
    """top -> mid -> leaf, each supervising with ``strategy``."""
    mid = (
        Supervisor,
        (journal, "mid", {"leaf": worker(journal, "leaf")}, strategy),
        "transient",
    )
    return Supervisor, (journal, "top", {"mid": mid}, strategy)


def spawned(journal: Journal, child: str) -> Any:
    return next(e[3] for e in journal.entries if e[1:3] == ("spawned", child))


@pytest.mark.parametrize("strategy", [ESCALATE, GIVE_UP], ids=["decider", "intensity"])
async def test_escalation_up_three_levels_surfaces_the_original_exception(
    strategy: OneForOne,
) -> None:
    journal = Journal()
    error = Boom("from the leaf")
    body_cancelled = False
    with pytest.raises(Boom) as info:
        async with ActorSystem(strategy=strategy) as system:
            factory, args = three_levels(journal, strategy)
            top = system.spawn(factory, *args, name="top")
            await journal.wait_count("leaf", "on_start")
            spawned(journal, "leaf").tell(("raise", error))
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                body_cancelled = True
                raise
    assert info.value is error
    assert body_cancelled and not system.running
    # mid, top and the guardian each escalated; nobody restarted anything.
    assert (system.escalations, system.restarts) == (3, 0)
    for who in ("leaf", "mid"):
        assert await spawned(journal, who).join() is error
    assert await top.join() is error
    assert (
        journal.count("leaf", "on_restart") == journal.count("mid", "on_start") - 1 == 0
    )


async def test_an_escalation_stops_the_other_children_as_stopped_by_parent() -> None:
    journal = Journal()
    async with ActorSystem(
        strategy=OneForOne(decider=lambda e: Directive.STOP)
    ) as system:
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {n: worker(journal, n) for n in "abc"},
            ESCALATE,
            name="sup",
        )
        refs = await sup.ask("children")
        refs["b"].tell("fail")
        reason = await sup.join()
        assert isinstance(reason, Boom)
        assert await refs["b"].join() is reason
        assert await refs["a"].join() is StopReason.PARENT
        assert await refs["c"].join() is StopReason.PARENT
        # on_stop in reverse start order, then the supervisor's.
        assert [h for h in journal.hooks() if h[1] == "on_stop"] == [
            ("c", "on_stop"),
            ("b", "on_stop"),
            ("a", "on_stop"),
            ("sup", "on_stop"),
        ]


async def test_an_escalated_supervisor_is_restarted_with_fresh_children() -> None:
    journal = Journal()
    async with ActorSystem() as system:  # the guardian restarts
        sup = system.spawn(
            Supervisor,
            journal,
            "sup",
            {"w": worker(journal, "w")},
            ESCALATE,
            name="sup",
        )
        first = (await sup.ask("children"))["w"]
        first.tell("fail")
        await journal.wait_count("sup", "on_start", count=2)
        second = (await sup.ask("children"))["w"]
        assert first != second and second.is_alive and sup.is_alive
        assert isinstance(await first.join(), Boom)
        assert (system.escalations, system.restarts) == (1, 1)
