"""ask: one worker replies; the handler's exception reaches the asker; a
timeout or a forbidden ask is a clear error. broadcast: every worker gets the
message once."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorSystem,
    AskSelfError,
    AskTimeout,
    Terminated,
)

from ._support import (
    BOOM,
    ROUTINGS,
    Boom,
    Journal,
    Worker,
    hold_every_worker,
    release,
    wait_all_blocked,
)

pytestmark = pytest.mark.anyio


@ROUTINGS
async def test_ask_gets_the_reply_of_the_worker_that_handled_it(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing=routing)
        replies = [await pool.ask(n) for n in range(9)]
    assert [message for _, message in replies] == list(range(9))
    # Each reply names the worker that journalled the message.
    assert sorted(replies) == sorted(journal.entries)
    if routing == "round_robin":
        assert [name for name, _ in replies] == [f"worker-{n % 3}" for n in range(9)]


@ROUTINGS
async def test_concurrent_asks_each_get_their_own_reply(routing: Any) -> None:
    journal = Journal()
    replies: dict[int, Any] = {}
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 4, journal, routing=routing, drain=3)

        async def ask(n: int) -> None:
            replies[n] = await pool.ask(n)

        async with anyio.create_task_group() as tg:
            for n in range(50):
                tg.start_soon(ask, n)
    assert {n: message for n, (_, message) in replies.items()} == {
        n: n for n in range(50)
    }


@ROUTINGS
async def test_the_handlers_exception_propagates_to_the_asker(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        with pytest.raises(Boom, match="failed on purpose"):
            await pool.ask(BOOM)
        # The worker was restarted; the pool goes on replying.
        assert (await pool.ask(1))[1] == 1
        # The other worker may have replied before the restart was done.
        await wait_all_blocked()
        assert system.failures == 1
        assert system.restarts == 1


@ROUTINGS
async def test_ask_times_out_when_no_worker_replies_in_time(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        holds = await hold_every_worker(pool)
        with pytest.raises(AskTimeout):
            await pool.ask("late", timeout=0.01)
        release(holds)
        await wait_all_blocked()
        # Handled after the asker gave up: its reply has nowhere to go.
        assert journal.messages().count("late") == 1
        assert [d.reason for d in system.dead_letters.recent] == ["ask abandoned"]


async def test_ask_rejects_a_bad_timeout() -> None:
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, Journal())
        with pytest.raises(ValueError):
            await pool.ask(1, timeout=0)
        with pytest.raises(TypeError):
            await pool.ask(1, timeout="1")  # type: ignore[call-overload]


@ROUTINGS
async def test_asking_a_signal_is_refused(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing=routing)
        other = system.spawn(Worker, journal)
        with pytest.raises(TypeError):
            await pool.ask(Terminated(other, None))
        await wait_all_blocked()
    assert journal.entries == []


class AsksItsOwnPool(Actor):
    def __init__(self, outcome: list[BaseException]) -> None:
        self.outcome = outcome

    async def receive(self, message: Any) -> Any:
        try:
            await message.ask(1)
        except AskSelfError as exc:
            self.outcome.append(exc)


@ROUTINGS
async def test_a_worker_asking_its_own_pool_gets_ask_self_error(routing: Any) -> None:
    # It would wait for a reply from itself or from siblings that may be
    # waiting for it in turn.
    outcome: list[BaseException] = []
    async with ActorSystem() as system:
        pool = system.spawn_pool(AsksItsOwnPool, 2, outcome, routing=routing)
        pool.tell(pool)
        await wait_all_blocked()
    assert len(outcome) == 1


@ROUTINGS
async def test_broadcast_reaches_every_worker_exactly_once(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 5, journal, routing=routing)
        pool.broadcast("all")
        await wait_all_blocked()
    assert sorted(journal.entries) == [(f"worker-{n}", "all") for n in range(5)]


@ROUTINGS
async def test_broadcast_keeps_its_place_among_each_workers_messages(
    routing: Any,
) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 3, journal, routing=routing, drain=1)
        holds = await hold_every_worker(pool)
        pool.broadcast("first")
        pool.broadcast("second")
        release(holds)
        await wait_all_blocked()
    for messages in journal.by_worker().values():
        assert messages == ["hold", "first", "second"]


@ROUTINGS
async def test_broadcast_reaches_a_restarted_worker(routing: Any) -> None:
    journal = Journal()
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, journal, routing=routing)
        pool.workers[0].tell(BOOM)
        await wait_all_blocked()
        pool.broadcast("all")
        await wait_all_blocked()
        assert system.restarts == 1
    assert sorted(journal.entries) == [("worker-0", "all"), ("worker-1", "all")]


@ROUTINGS
async def test_broadcast_to_a_stopped_pool_is_a_dead_letter_per_worker(
    routing: Any,
) -> None:
    # A tell to every worker: each a dead letter, as a tell to a stopped actor.
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 2, Journal(), routing=routing)
        pool.stop()
        pool.broadcast("late")
        await pool.join()
        pool.broadcast("later")
        told = [
            (d.recipient, d.message)
            for d in system.dead_letters.recent
            if d.reason == "actor stopped"
        ]
        assert told == [(w, m) for m in ("late", "later") for w in pool.workers]


@ROUTINGS
async def test_ask_waits_for_room_in_a_full_pool_then_gets_its_reply(
    routing: Any,
) -> None:
    journal = Journal()
    replies: list[Any] = []
    async with ActorSystem() as system:
        pool = system.spawn_pool(Worker, 1, journal, routing=routing, capacity=1)
        holds = await hold_every_worker(pool)
        pool.tell(0)  # full
        with pytest.raises(AskTimeout):
            await pool.ask("no room", timeout=0.01)  # never got in
        async with anyio.create_task_group() as tg:

            async def ask() -> None:
                replies.append(await pool.ask(1))

            tg.start_soon(ask)
            await wait_all_blocked()
            assert replies == []
            release(holds)
    assert replies == [("worker-0", 1)]
    assert journal.messages() == ["hold", 0, 1]
