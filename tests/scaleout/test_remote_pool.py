"""Pools across processes, with the nodes as systems of this process: work
pulled by credits, asks, tells, broadcasts, a slow node, a lost node's jobs
dispatched again, a pool with no live worker, nodes joining late or again."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from actors import (
    ActorStopped,
    ActorSystem,
    AskTimeout,
    DeadLetter,
    MailboxFull,
    SystemNotRunning,
)
from actors.nats import NatsServer
from actors.node import host
from actors.remote import RemotePoolRef, SpawnError
from actors.remote.scaleout._pool_coordinator import PoolCoordination
from actors.testing import await_assert, wait_all_blocked

from ._workers import GATES, Echo, Recorder, Reporter, Result
from .conftest import WORKERS, node, remote

pytestmark = pytest.mark.anyio


async def results(recorder: Any) -> list[Result]:
    got: list[Result] = await recorder.ask("get")
    return got


async def test_asks_to_a_pool_over_two_nodes_are_answered_by_both(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
        node(url, system_name, "b"),
    ):
        recorder = main.spawn(Recorder)
        pool = main.remote.spawn_pool(Reporter, recorder, nodes=["a", "b"], workers=2)
        assert isinstance(pool, RemotePoolRef)
        await pool.wait_ready(timeout=10)
        assert sorted(pool.members) == ["a", "b"]
        assert pool.size == 4
        replies: dict[int, Any] = {}

        async def ask(job: int) -> None:
            replies[job] = await pool.ask(job, timeout=10)

        async with anyio.create_task_group() as tg:
            for job in range(40):
                tg.start_soon(ask, job)
        assert replies == {job: job for job in range(40)}
        seen = await results(recorder)
        assert sorted(r.job for r in seen) == list(range(40))
        assert {r.node for r in seen} == {"a", "b"}
        assert pool.in_flight == {"a": 0, "b": 0}


async def test_told_and_sent_jobs_each_run_once_and_broadcasts_reach_every_worker(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
        node(url, system_name, "b"),
    ):
        reached = anyio.Event()
        recorder = main.spawn(Recorder, (201, reached))
        pool = main.remote.spawn_pool(
            Reporter, recorder, nodes=["a", "b"], workers=2, capacity=16
        )
        await pool.wait_ready(timeout=10)
        for job in range(100):
            pool.tell(job) if job % 2 else await pool.send(job)
        for job in range(100, 200):
            await pool.send(job)
        pool.broadcast("hello")
        with anyio.fail_after(20):
            await reached.wait()
        seen = await results(recorder)
        jobs = Counter(r.job for r in seen if r.job >= 0)
        assert jobs == Counter(range(200))
        # Every worker of every node got the broadcast once.
        hellos = sorted((r.node, r.worker) for r in seen if r.job == -1)
        assert len(hellos) == len(set(hellos)) == 4


async def test_a_handlers_exception_fails_the_ask_and_the_pool_goes_on(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        pool = main.remote.spawn_pool(Echo, nodes=["a"])
        with pytest.raises(ValueError, match="asked to fail"):
            await pool.ask("fail", timeout=10)
        assert await pool.ask("again", timeout=10) == "again"


async def test_a_node_ten_times_slower_takes_about_a_tenth_of_the_jobs(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    jobs = 60
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "fast"),
        node(url, system_name, "slow"),
    ):
        reached = anyio.Event()
        recorder = main.spawn(Recorder, (jobs, reached))
        # Ten times slower: the ratio holds with a loaded machine's overhead
        # per job (a few ms) added to both.
        delays = {"fast": 0.02, "slow": 0.2}
        pool = main.remote.spawn_pool(
            Reporter, recorder, delays, nodes=["fast", "slow"], prefetch=1
        )
        await pool.wait_ready(timeout=10)
        for job in range(jobs):
            pool.tell(job)
        with anyio.fail_after(20):
            await reached.wait()
        by_node = Counter(r.node for r in await results(recorder))
        # Credits: each node pulls as it finishes, so about 10:1.
        assert by_node["fast"] >= 3 * by_node["slow"], by_node
        assert by_node["slow"] >= 1, by_node


async def test_the_jobs_a_lost_member_held_are_dispatched_to_the_others(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    GATES["held"] = anyio.Event()  # never set: node "held" finishes nothing
    try:
        async with (
            ActorSystem(remote=remote(url, system_name, "main")) as main,
            node(url, system_name, "other"),
        ):
            reached = anyio.Event()
            recorder = main.spawn(Recorder, (20, reached))
            pool = main.remote.spawn_pool(
                Reporter, recorder, nodes=["held", "other"], workers=2
            )
            # Leaving, it gives its held jobs 0.1 s, then they are cancelled.
            async with node(url, system_name, "held", shutdown_timeout=0.1):
                await pool.wait_ready(timeout=10)
                for job in range(20):
                    pool.tell(job)

                # "held" took its window (2 workers x 4) and holds it.
                def held() -> None:
                    assert pool.in_flight.get("held", 0) >= 8 and not pool.queued

                await await_assert(held, timeout=10)
            # It left: what it took goes to "other".
            with anyio.fail_after(20):
                await reached.wait()
            seen = await results(recorder)
            assert sorted(r.job for r in seen) == list(range(20))
            assert {r.node for r in seen} == {"other"}
            assert pool.redispatched >= 8
    finally:
        del GATES["held"]


async def test_with_no_live_worker_the_pool_queues_and_an_ask_times_out_clearly(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, nodes=["nobody"], capacity=2)
        pool.tell("queued")
        assert pool.queued == 1
        with pytest.raises(AskTimeout, match="no live worker"):
            await pool.ask("anyone?", timeout=0.2)
        assert pool.queued == 1  # the timed-out ask left nothing behind
        pool.tell("second")
        with pytest.raises(MailboxFull):
            pool.tell("third")


async def test_a_node_that_comes_up_later_gets_the_queued_work(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with ActorSystem(remote=remote(url, system_name, "main")) as main:
        reached = anyio.Event()
        recorder = main.spawn(Recorder, (5, reached))
        pool = main.remote.spawn_pool(Reporter, recorder, nodes=["late"])
        for job in range(5):
            pool.tell(job)
        async with node(url, system_name, "late"):
            with anyio.fail_after(20):
                await reached.wait()
        # It left; a new incarnation of it joins the pool again.
        assert pool.members == []
        async with node(url, system_name, "late"):
            await pool.wait_ready(timeout=20)
            assert await pool.ask(7, timeout=10) == 7


async def test_stopping_the_pool_fails_its_queued_asks_and_waiting_sends(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, nodes=["nobody"], capacity=1)
        outcomes: list[BaseException] = []

        async def ask() -> None:
            try:
                await pool.ask("never", timeout=30)
            except ActorStopped as exc:
                outcomes.append(exc)

        async def send() -> None:
            try:
                await pool.send("waits for room")
            except ActorStopped as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            while not pool.queued:
                await anyio.lowlevel.checkpoint()
            tg.start_soon(send)
            await anyio.lowlevel.checkpoint()
            pool.stop()
        assert len(outcomes) == 2
        await pool.join()
        assert not pool.is_alive
        # A tell is a dead letter, as to a local pool that stopped.
        letters: list[DeadLetter] = []
        with main.dead_letters.subscribe(letters.append):
            pool.tell("after")
        assert [(d.recipient, d.message, d.reason) for d in letters] == [
            (pool, "after", "actor stopped")
        ]
        with pytest.raises(ActorStopped):
            await pool.send("after")
        with pytest.raises(ActorStopped):
            await pool.ask("after")
    with pytest.raises(SystemNotRunning):
        pool.tell("after the system")


async def test_a_node_that_does_not_host_the_class_makes_wait_ready_raise(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", modules=()),
    ):
        pool = main.remote.spawn_pool(Echo, nodes=["a"])
        with pytest.raises(SpawnError, match="does not host"):
            await pool.wait_ready(timeout=10)


async def test_bad_pool_arguments_are_refused_at_the_call(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        spawn = main.remote.spawn_pool
        with pytest.raises(ValueError, match="either nodes"):
            spawn(Echo)
        with pytest.raises(ValueError, match="either nodes"):
            spawn(Echo, nodes=["a"], processes=1)
        with pytest.raises(TypeError, match="nodes"):
            spawn(Echo, nodes="a")
        with pytest.raises(ValueError, match="workers"):
            spawn(Echo, nodes=["a"], workers=0)
        with pytest.raises(TypeError, match="capacity"):
            spawn(Echo, nodes=["a"], capacity=1.5)
        with pytest.raises(ValueError, match="worker_capacity"):
            spawn(Echo, nodes=["a"], prefetch=4, worker_capacity=2)
        with pytest.raises(TypeError, match="object"):
            spawn(Echo, object(), nodes=["a"])
        pool = spawn(Echo, nodes=["a"])
        with pytest.raises(TypeError, match="object"):
            pool.tell(object())


async def test_jobs_lost_on_the_wire_are_found_by_the_check_and_dispatched_again(
    nats_server: NatsServer, system_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first Jobs message is "lost": counted as sent, never published.
    real_tell = PoolCoordination._tell
    lost: list[Any] = []

    def lossy_tell(member: Any, items: list[Any]) -> bool:
        if not lost:
            lost.append(items)
            member.batches += 1
            return True
        return real_tell(member, items)

    monkeypatch.setattr(PoolCoordination, "_tell", staticmethod(lossy_tell))
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        finished = anyio.Event()
        recorder = main.spawn(Recorder, (10, finished))
        pool = main.remote.spawn_pool(
            Reporter, recorder, nodes=["a"], check_interval=0.05
        )
        await pool.wait_ready(timeout=10)
        for job in range(10):
            pool.tell(job)
        with anyio.fail_after(10):
            await finished.wait()
        assert lost
        assert pool.redispatched == len(lost[0])
        assert sorted(r.job for r in await results(recorder)) == list(range(10))


async def test_a_cancelled_ask_leaves_nothing_queued(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, nodes=["nobody"])
        with anyio.move_on_after(0.05):
            await pool.ask("cancelled", timeout=30)
        assert pool.queued == 0


async def test_wait_idle_returns_once_every_job_given_so_far_was_handled(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        recorder = main.spawn(Recorder)
        pool = main.remote.spawn_pool(Reporter, recorder, nodes=["a"], workers=2)
        for job in range(50):
            pool.tell(job)
        with anyio.fail_after(20):
            await pool.wait_idle()
        assert pool.queued == 0 and pool.in_flight == {"a": 0}
        assert pool.handled == {"a": 50}
        # The Results were told before the reports: they are all there.
        assert sorted(r.job for r in await results(recorder)) == list(range(50))


async def test_a_node_added_to_a_running_pool_gets_work(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
        node(url, system_name, "b"),
    ):
        recorder = main.spawn(Recorder)
        pool = main.remote.spawn_pool(Reporter, recorder, nodes=["a"])
        await pool.wait_ready(timeout=10)
        pool.add_node("b")
        with pytest.raises(ValueError, match="already"):
            pool.add_node("b")
        with pytest.raises(ValueError):
            pool.add_node("not a token")
        await pool.wait_ready(timeout=10)
        assert sorted(pool.members) == ["a", "b"]
        for job in range(40):
            pool.tell(job)
        await pool.wait_idle()
        assert set(pool.handled) == {"a", "b"}


async def test_a_node_whose_agent_comes_after_the_pools_first_look_still_joins(
    nats_server: NatsServer, system_name: str
) -> None:
    # A node process registers its agent just after it connects: a pool that
    # looks it up in between got ActorNotFound and took it as a refusal for
    # good (wait_ready raised "no actor 'actors.node'").
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        ActorSystem(remote=remote(url, system_name, "late")) as late,
    ):
        pool = main.remote.spawn_pool(Echo, nodes=["late"])
        await wait_all_blocked()  # the pool's lookup of the agent is out
        # A round trip to the same node after it: its answer (no agent) has
        # come back by the time this one does.
        await main.remote.lookup("late", "/user", timeout=5)
        host(late, [WORKERS])
        await pool.wait_ready(timeout=10)
        assert await pool.ask("hello", timeout=10) == "hello"
