"""How the delivery handles end: after ``stop()``, after their actor
stopped with the system, after the system exited, every waiting and later
call raises the documented error (none hangs, nothing is accepted and lost
silently), and bad arguments are refused before anything is accepted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import msgspec
import pytest

from actors import ActorStopped, ActorSystem, SystemNotRunning
from actors.delivery import (
    ConsumerController,
    DurableProducerQueue,
    ProducerController,
    ProducerFailed,
    ProducerStopped,
    WorkerController,
    WorkQueue,
)
from actors.persistence import Codec, JournalError, MemoryJournal, StoredEvent
from actors.testing import wait_all_blocked

from ._links import Consumer, Effects

pytestmark = pytest.mark.anyio


class Order(msgspec.Struct, frozen=True):
    n: int


async def test_every_call_after_the_system_exited_raises_system_not_running() -> None:
    journal = MemoryJournal()
    async with ActorSystem() as system:
        effects = Effects()
        cc = ConsumerController.spawn(system, system.spawn(Consumer, effects))
        plain = await ProducerController.start(system, "plain", consumer=cc.ref)
        durable = await ProducerController.start(
            system,
            "durable",
            consumer=cc.ref,
            queue=DurableProducerQueue(journal, Codec(Order)),
        )
        wq = await WorkQueue.start(system, "q")
        with anyio.fail_after(10):
            assert await plain.send("early") == 1
            await plain.wait_confirmed()
    letters = system.dead_letters.count
    stored = len(await journal.read_events("delivery-producer|durable", 1, None, 100))
    with anyio.fail_after(10):
        for call in (
            lambda: plain.send("late"),
            lambda: plain.ask("late"),
            lambda: plain.wait_confirmed(),
            lambda: plain.wait_confirmed(1),
            lambda: durable.send(Order(1)),
            lambda: durable.ask(Order(1)),
            lambda: wq.send(1),
            lambda: wq.ask(1),
            lambda: wq.wait_done(),
            lambda: cc.wait_confirmed("plain", 1),
        ):
            with pytest.raises(SystemNotRunning, match="exited"):
                await call()
    with pytest.raises(SystemNotRunning):
        plain.register_consumer(cc.ref)
    with pytest.raises(SystemNotRunning):
        cc.register_to(plain.ref)
    # Nothing was accepted, nothing went anywhere.
    assert plain.statistics().accepted == 1
    assert plain.statistics().lost_sends == 0
    assert durable.statistics().accepted == 0
    assert wq.statistics().accepted == 0
    assert system.dead_letters.count == letters
    assert (
        len(await journal.read_events("delivery-producer|durable", 1, None, 100))
        == stored
    )
    assert [m for _, _, m in effects.seen] == ["early"]
    plain.stop()  # stopping after the exit does nothing (it raises nothing)
    wq.stop()


async def _failing(call: Any) -> BaseException:
    try:
        await call()
    except BaseException as exc:
        return exc
    raise AssertionError(f"{call} returned")


async def test_stop_releases_every_waiter_of_a_producer(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    effects.gate = anyio.Event()
    cc = ConsumerController.spawn(
        actor_system, actor_system.spawn(Consumer, effects), window=1
    )
    producer = await ProducerController.start(actor_system, "p", consumer=cc.ref)
    results: dict[str, BaseException] = {}

    async def record(name: str, call: Any) -> None:
        results[name] = await _failing(call)

    with anyio.fail_after(10):
        assert await producer.send("first") == 1  # the demand was 1
        async with anyio.create_task_group() as tg:
            tg.start_soon(record, "ask", lambda: producer.ask("second"))
            tg.start_soon(record, "send", lambda: producer.send("third"))
            tg.start_soon(record, "confirmed", lambda: producer.wait_confirmed(1))
            await wait_all_blocked()
            producer.stop()
    for name in ("ask", "send", "confirmed"):
        error = results[name]
        assert isinstance(error, ProducerStopped), name
        assert isinstance(error, ProducerFailed) and isinstance(error, ActorStopped)
    with anyio.fail_after(10):
        with pytest.raises(ProducerStopped):
            await producer.send("later")
        with pytest.raises(ProducerStopped):
            await producer.wait_confirmed()
    with pytest.raises(ProducerStopped):
        producer.register_consumer(cc.ref)
    effects.gate.set()  # the handler returns: the system stops without waiting


async def test_a_system_stop_releases_every_waiter() -> None:
    effects = Effects()
    effects.gate = anyio.Event()  # no handler returns until every waiter raised
    results: dict[str, BaseException] = {}
    raised = anyio.Event()
    queue_ready = anyio.Event()
    queue: list[WorkQueue[Any]] = []

    async def record(name: str, call: Any) -> None:
        results[name] = await _failing(call)
        if len(results) == 4:
            raised.set()

    async def release() -> None:
        await raised.wait()
        assert effects.gate is not None
        effects.gate.set()  # the consumers may stop now

    async def find() -> Any:
        await queue_ready.wait()
        return queue[0].ref

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg, ActorSystem() as system:
            # The consumers first: a system stops its actors latest first,
            # so the producer and the queue stop while the handlers wait.
            cc = ConsumerController.spawn(system, system.spawn(Consumer, effects))
            WorkerController.spawn(system, system.spawn(Consumer, effects), find)
            producer = await ProducerController.start(system, "p", consumer=cc.ref)
            jobs = await WorkQueue.start(system, "jobs")
            queue.append(jobs)
            queue_ready.set()
            tg.start_soon(record, "ask", lambda: producer.ask("job"))
            tg.start_soon(record, "job", lambda: jobs.ask(99))
            while (
                jobs.statistics().in_flight == 0
                or producer.statistics().unconfirmed == 0
            ):
                await wait_all_blocked()
            tg.start_soon(record, "confirmed", producer.wait_confirmed)
            tg.start_soon(record, "done", jobs.wait_done)
            await wait_all_blocked()
            assert producer.statistics().unconfirmed == 1
            tg.start_soon(release)
            system.stop()
            await system.wait_exited()
    assert set(results) == {"ask", "confirmed", "job", "done"}
    for name, error in results.items():
        # Stopped with the system: a ProducerStopped, both an ActorStopped
        # and a ProducerFailed (a SystemNotRunning too once it has exited).
        assert isinstance(error, ProducerStopped), (name, error)
        assert isinstance(error, ActorStopped) and isinstance(error, ProducerFailed)


async def test_stop_releases_every_waiter_of_a_work_queue(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    effects.gate = anyio.Event()
    jobs = await WorkQueue.start(actor_system, "jobs", capacity=2)
    worker = actor_system.spawn(Consumer, effects)
    WorkerController.spawn(actor_system, worker, jobs.ref)
    results: dict[str, BaseException] = {}

    async def record(name: str, call: Any) -> None:
        results[name] = await _failing(call)

    with anyio.fail_after(10):
        assert await jobs.send(1) == 1
        async with anyio.create_task_group() as tg:
            tg.start_soon(record, "ask", lambda: jobs.ask(99))
            await wait_all_blocked()
            tg.start_soon(record, "send", lambda: jobs.send(3))  # over capacity
            tg.start_soon(record, "done", jobs.wait_done)
            await wait_all_blocked()
            jobs.stop()
        with pytest.raises(ProducerStopped):
            await jobs.send(4)
        with pytest.raises(ProducerStopped):
            await jobs.wait_done()
    assert set(results) == {"ask", "send", "done"}
    assert all(isinstance(e, ProducerStopped) for e in results.values()), results
    assert jobs.statistics().accepted == 2
    effects.gate.set()  # the handler returns: the system stops without waiting


async def test_a_bad_timeout_is_refused_before_anything_is_accepted(
    actor_system: ActorSystem[Any],
) -> None:
    cc = ConsumerController.spawn(actor_system, actor_system.spawn(Consumer, Effects()))
    producer = await ProducerController.start(actor_system, "p", consumer=cc.ref)
    jobs = await WorkQueue.start(actor_system, "jobs")
    with anyio.fail_after(10):
        for timeout, error in ((-1, ValueError), (0, ValueError), ("1", TypeError)):
            with pytest.raises(error, match="timeout"):
                await producer.ask(1, timeout=timeout)
            with pytest.raises(error, match="timeout"):
                await jobs.ask(1, timeout=timeout)
        with pytest.raises(ValueError, match="timeout"):
            await producer.ask(1, timeout=float("nan"))
    assert producer.statistics().accepted == 0
    assert producer.next_seq_nr == 1
    assert jobs.statistics().accepted == 0


async def test_wait_confirmed_checks_its_sequence_number(
    actor_system: ActorSystem[Any],
) -> None:
    effects = Effects()
    cc = ConsumerController.spawn(actor_system, actor_system.spawn(Consumer, effects))
    producer = await ProducerController.start(actor_system, "p", consumer=cc.ref)
    with anyio.fail_after(10):
        for n in range(3):
            await producer.send(n)
        with pytest.raises(TypeError, match="seq_nr must be an int"):
            await producer.wait_confirmed("x")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="seq_nr must be an int"):
            await producer.wait_confirmed(True)
        with pytest.raises(ValueError, match="seq_nr must be >= 0"):
            await producer.wait_confirmed(-1)
        never = "seq_nr 1000000 was never sent: the highest sequence number sent"
        with pytest.raises(ValueError, match=f"{never} so far is 3"):
            await producer.wait_confirmed(10**6)
        await producer.wait_confirmed(3)
        await producer.wait_confirmed(0)
        with pytest.raises(TypeError, match="seq_nr must be an int"):
            await cc.wait_confirmed("p", "1")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="producer_id must be a str"):
            await cc.wait_confirmed(1, 1)  # type: ignore[arg-type]
        await cc.wait_confirmed("p", 3)
    assert [m for _, _, m in effects.seen] == [0, 1, 2]


async def test_a_consumer_wait_ends_when_the_consumer_controller_stops(
    actor_system: ActorSystem[Any],
) -> None:
    consumer = actor_system.spawn(Consumer, Effects())
    cc = ConsumerController.spawn(actor_system, consumer)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def wait() -> None:
                with pytest.raises(ActorStopped, match="stopped"):
                    await cc.wait_confirmed("nobody", 1)

            tg.start_soon(wait)
            await wait_all_blocked()
            consumer.stop()  # its controller stops with it (it watches it)
        with pytest.raises(ActorStopped):
            await cc.wait_confirmed("nobody", 1)


async def test_a_worker_controller_names_its_bad_arguments(
    actor_system: ActorSystem[Any],
) -> None:
    jobs = await WorkQueue.start(actor_system, "jobs")
    with pytest.raises(TypeError, match="worker must be an ActorRef"):
        WorkerController.spawn(actor_system, None, jobs.ref)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="queue must be"):
        WorkerController.spawn(actor_system, actor_system.spawn(Consumer, Effects()), 1)  # type: ignore[arg-type]


class _GatedJournal(MemoryJournal):
    """A journal whose appends wait for ``gate`` (the first one counts in
    ``entered``)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = anyio.Event()
        self.entered = anyio.Event()

    async def append(
        self, persistence_id: str, events: Sequence[StoredEvent], expected: int
    ) -> None:
        self.entered.set()
        await self.gate.wait()
        await super().append(persistence_id, events, expected)


async def test_a_send_cancelled_mid_append_fails_the_sends_waiting_behind_it(
    actor_system: ActorSystem[Any],
) -> None:
    journal = _GatedJournal()
    cc = ConsumerController.spawn(actor_system, actor_system.spawn(Consumer, Effects()))
    producer = await ProducerController.start(
        actor_system,
        "p",
        consumer=cc.ref,
        queue=DurableProducerQueue(journal, Codec(Order)),
    )
    behind: list[BaseException] = []

    async def second() -> None:
        behind.append(await _failing(lambda: producer.send(Order(1))))

    with anyio.fail_after(10):
        while producer.demand == 0:
            await wait_all_blocked()
        scope = anyio.CancelScope()

        async def first() -> None:
            with scope:
                await producer.send(Order(0))

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)  # the writer: its append waits at the gate
            await journal.entered.wait()
            tg.start_soon(second)  # its message waits for the next append
            await wait_all_blocked()
            scope.cancel()
        # The second send was not left waiting for an append nobody makes.
        assert len(behind) == 1
        assert isinstance(behind[0], JournalError), behind
        assert "interrupted" in str(behind[0])
        with pytest.raises(ProducerFailed):
            await producer.send(Order(2))


async def test_a_durable_queue_checks_the_producer_id_it_loads() -> None:
    queue = DurableProducerQueue(MemoryJournal(), Codec(Order))
    with pytest.raises(TypeError, match="producer_id must be a str"):
        await queue.load(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="producer_id"):
        await queue.load("")
    assert (await queue.load("p")).next_seq_nr == 1  # nothing was loaded before


async def test_nothing_starts_on_a_system_that_has_exited() -> None:
    queue = DurableProducerQueue(MemoryJournal(), Codec(Order))
    jobs_queue = DurableProducerQueue(MemoryJournal(), Codec(Order))
    async with ActorSystem() as system:
        worker = system.spawn(Consumer, Effects())
    with pytest.raises(SystemNotRunning):
        await ProducerController.start(system, "p", queue=queue)
    with pytest.raises(SystemNotRunning):
        await WorkQueue.start(system, "q", durable=jobs_queue)
    with pytest.raises(SystemNotRunning):
        ConsumerController.spawn(system, worker)
    with pytest.raises(SystemNotRunning):
        WorkerController.spawn(system, worker, worker)
    # The queues were not used up: a producer may still load them.
    assert (await queue.load("p")).next_seq_nr == 1
    assert (await jobs_queue.load("q")).next_seq_nr == 1
