"""Strategies (one-for-one, one-for-all, rest-for-one), restart types
(permanent, transient, temporary) and the decider's directives."""

from __future__ import annotations

from typing import Any

import pytest

from actors import (
    ActorSystem,
    Directive,
    OneForAll,
    OneForOne,
    RestForOne,
    StopReason,
    SupervisorStrategy,
)

from ._support import Boom, Journal, Supervisor, worker

pytestmark = pytest.mark.anyio


async def start_tree(
    system: ActorSystem,
    journal: Journal,
    strategy: SupervisorStrategy,
    names: str = "abcd",
    **restart: str,
) -> dict[str, Any]:
    """A supervisor ``sup`` with workers ``names`` started in that order."""
    specs = {n: worker(journal, n, restart.get(n, "transient")) for n in names}
    sup = system.spawn(Supervisor, journal, "sup", specs, strategy, True, name="sup")
    refs: dict[str, Any] = await sup.ask("children")
    for ref in refs.values():
        await ref.ask("get")  # every child has started
    journal.entries.clear()
    return refs


def lifecycle(journal: Journal) -> list[tuple[str, str]]:
    return [h for h in journal.hooks() if h[0] != "sup"]


async def test_one_for_one_restarts_only_the_failed_child() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne())
        refs["b"].tell("fail")
        await journal.wait_count("b", "on_restart")
        for ref in refs.values():
            await ref.ask("get")
        assert lifecycle(journal) == [("b", "on_stop"), ("b", "on_restart")]


async def test_one_for_all_stops_in_reverse_start_order_and_starts_in_order() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForAll())
        refs["a"].tell("x")  # state that a restart resets
        refs["c"].tell("fail")
        await journal.wait_count("d", "on_restart")
        assert lifecycle(journal) == [
            ("d", "on_stop"),
            ("c", "on_stop"),
            ("b", "on_stop"),
            ("a", "on_stop"),
            ("a", "on_restart"),
            ("b", "on_restart"),
            ("c", "on_restart"),
            ("d", "on_restart"),
        ]
        # Every sibling is a fresh instance, told why: the failed child's error.
        causes = {e[0]: e[2] for e in journal.entries if e[1] == "on_restart"}
        assert len({id(c) for c in causes.values()}) == 1
        assert isinstance(causes["a"], Boom)
        assert await refs["a"].ask("get") == 0
        assert system.restarts == 1
        # Nobody terminated: same refs, and the supervisor saw no Terminated.
        assert all(ref.is_alive for ref in refs.values())
        assert journal.count("sup", "terminated") == 0


async def test_rest_for_one_restarts_the_failed_child_and_those_started_after_it() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, RestForOne())
        refs["b"].tell("fail")
        await journal.wait_count("d", "on_restart")
        assert lifecycle(journal) == [
            ("d", "on_stop"),
            ("c", "on_stop"),
            ("b", "on_stop"),
            ("b", "on_restart"),
            ("c", "on_restart"),
            ("d", "on_restart"),
        ]
        refs["a"].tell("x")
        assert await refs["a"].ask("get") == 1  # a kept its instance


async def test_rest_for_one_on_the_last_child_restarts_only_it() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, RestForOne())
        refs["d"].tell("fail")
        await journal.wait_count("d", "on_restart")
        for ref in refs.values():
            await ref.ask("get")
        assert lifecycle(journal) == [("d", "on_stop"), ("d", "on_restart")]


async def test_messages_queued_to_siblings_survive_a_one_for_all_restart_in_order() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForAll(), names="ab")
        for i in range(5):
            refs["b"].tell(i)
        refs["a"].tell("fail")
        await journal.wait_count("b", "on_restart")
        assert await refs["b"].ask("get") >= 0
        got = [e[2] for e in journal.entries if e[:2] == ("b", "receive")]
        assert got == [0, 1, 2, 3, 4, "get"]


async def test_one_for_all_goes_on_in_order_when_a_sibling_fails_to_start() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        specs = {n: worker(journal, n) for n in "abc"}
        specs["b"] = worker(journal, "b", on_restart=1)  # fails once, on restart
        sup = system.spawn(
            Supervisor, journal, "sup", specs, OneForAll(max_restarts=5), name="sup"
        )
        refs = await sup.ask("children")
        for ref in refs.values():
            await ref.ask("get")
        journal.entries.clear()
        refs["a"].tell("fail")
        # All restart (a fails), then all restart again (b's on_restart failed).
        await journal.wait_count("c", "on_restart", count=2)
        assert lifecycle(journal) == [
            ("c", "on_stop"),
            ("b", "on_stop"),
            ("a", "on_stop"),
            ("a", "on_restart"),
            ("b", "on_restart"),  # fails
            ("c", "on_restart"),
            ("c", "on_stop"),
            ("a", "on_stop"),  # b never started: no on_stop
            ("a", "on_restart"),
            ("b", "on_restart"),
            ("c", "on_restart"),
        ]
        assert system.restarts == 2


async def test_a_permanent_child_is_restarted_after_failing_or_exiting() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(), "p", p="permanent")
        p = refs["p"]
        p.tell("fail")
        await journal.wait_count("p", "on_restart", count=1)
        p.tell("stop")  # context.stop(): a normal exit, restarted all the same
        await journal.wait_count("p", "on_restart", count=2)
        assert p.is_alive and await p.ask("get") == 0
        assert journal.of("p")[-2] == ("on_restart", None)  # no exception this time
        assert system.restarts == 2
        p.stop()  # from outside: a stop is final
        assert await p.join() is StopReason.NORMAL


async def test_a_permanent_child_that_stops_itself_and_fails_restarts_once() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(), "p", p="permanent")
        p = refs["p"]
        p.tell("stop and fail")  # one exit, one failure: one restart
        p.tell("x")
        assert await p.ask("get") == 1
        assert journal.count("p", "on_restart") == 1
        assert system.restarts == 1


async def test_a_transient_child_is_restarted_after_failing_not_after_a_stop() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(), "t", t="transient")
        t = refs["t"]
        t.tell("fail")
        await journal.wait_count("t", "on_restart")
        t.tell("stop")
        assert await t.join() is StopReason.NORMAL
        assert system.restarts == 1
        await journal.wait_count("sup", "terminated")
        assert journal.of("sup")[-1] == ("terminated", "t", StopReason.NORMAL)


async def test_a_temporary_child_is_never_restarted_and_ends_with_its_failure() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(), "t", t="temporary")
        refs["t"].tell("fail")
        reason = await refs["t"].join()
        assert isinstance(reason, Boom)
        assert system.restarts == 0 and journal.count("t", "on_restart") == 0
        await journal.wait_count("sup", "terminated")
        assert journal.of("sup")[-1] == ("terminated", "t", reason)


async def test_a_temporary_sibling_is_stopped_not_restarted_by_one_for_all() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForAll(), "abc", b="temporary")
        refs["c"].tell("fail")
        await journal.wait_count("c", "on_restart")
        assert await refs["b"].join() is StopReason.PARENT
        assert lifecycle(journal) == [
            ("c", "on_stop"),
            ("b", "on_stop"),
            ("a", "on_stop"),
            ("a", "on_restart"),
            ("c", "on_restart"),
        ]


# As Erlang: a temporary child's exit, even abnormal, restarts no sibling.
async def test_a_failed_temporary_child_under_one_for_all_ends_alone() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForAll(), "abc", b="temporary")
        refs["b"].tell("fail")
        assert isinstance(await refs["b"].join(), Boom)
        for name in "ac":
            assert await refs[name].ask("get") == 0
        assert lifecycle(journal) == [("b", "on_stop")]
        assert system.restarts == 0


# -- the decider -----------------------------------------------------------------

DECIDER = {
    ValueError: Directive.RESUME,
    KeyError: Directive.STOP,
    LookupError: Directive.RESTART,  # IndexError, via the MRO
    Boom: Directive.ESCALATE,
}


async def test_the_decider_maps_an_exception_to_resume_and_the_state_is_kept() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(decider=DECIDER), "w")
        w = refs["w"]
        w.tell("x")
        w.tell(("raise", ValueError("resume me")))
        w.tell("y")
        assert await w.ask("get") == 2
        assert lifecycle(journal) == []
        assert (system.failures, system.restarts) == (1, 0)


async def test_the_decider_maps_an_exception_to_stop_with_the_exception_as_reason() -> (
    None
):
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(decider=DECIDER), "w")
        error = KeyError("stop me")
        refs["w"].tell(("raise", error))
        assert await refs["w"].join() is error
        await journal.wait_count("sup", "terminated")
        assert journal.of("sup")[-1] == ("terminated", "w", error)
        assert lifecycle(journal) == [("w", "on_stop")]
        assert system.restarts == 0


async def test_the_decider_matches_along_the_mro_and_restarts() -> None:
    journal = Journal()
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, OneForOne(decider=DECIDER), "w")
        refs["w"].tell("x")
        refs["w"].tell(("raise", IndexError("restart me")))
        assert await refs["w"].ask("get") == 0
        assert lifecycle(journal) == [("w", "on_stop"), ("w", "on_restart")]


async def test_the_decider_maps_an_exception_to_escalate_and_the_supervisor_fails() -> (
    None
):
    journal = Journal()
    async with ActorSystem(
        strategy=OneForOne(decider=lambda exc: Directive.STOP)
    ) as system:
        refs = await start_tree(system, journal, OneForOne(decider=DECIDER), "vw")
        refs["w"].tell("fail")
        sup = refs["w"]._cell.parent.ref
        reason = await sup.join()
        assert isinstance(reason, Boom)
        assert await refs["w"].join() is reason
        assert await refs["v"].join() is StopReason.PARENT
        assert system.escalations == 1


async def test_an_exception_the_decider_mapping_does_not_list_escalates() -> None:
    assert OneForOne(decider=DECIDER).decide(RuntimeError()) is Directive.ESCALATE
    assert OneForOne().decide(RuntimeError()) is Directive.RESTART  # the default


async def test_a_callable_decider_decides() -> None:
    journal = Journal()
    strategy = OneForOne(
        decider=lambda exc: (
            Directive.RESUME if "keep" in str(exc) else Directive.RESTART
        )
    )
    async with ActorSystem() as system:
        refs = await start_tree(system, journal, strategy, "w")
        refs["w"].tell("x")
        refs["w"].tell(("raise", RuntimeError("keep")))
        assert await refs["w"].ask("get") == 1
        refs["w"].tell(("raise", RuntimeError("drop")))
        assert await refs["w"].ask("get") == 0


async def test_a_decider_returning_something_else_fails_the_supervisor() -> None:
    journal = Journal()
    strategy = OneForOne(decider=lambda exc: "restart")  # type: ignore[arg-type,return-value]
    async with ActorSystem(
        strategy=OneForOne(decider=lambda exc: Directive.STOP)
    ) as system:
        refs = await start_tree(system, journal, strategy, "w")
        refs["w"].tell("fail")
        sup = refs["w"]._cell.parent.ref
        reason = await sup.join()
        assert isinstance(reason, TypeError) and "not a Directive" in str(reason)
