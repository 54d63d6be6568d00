"""Remote actors across processes: a node in a child process (started with
``sys.executable``) answers asks; killed with ``kill -9``, its watchers get
``Terminated(ref, NodeDown)`` within the detector's bound and asks to it fail
fast."""

from __future__ import annotations

import math
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from actors import Actor, ActorSystem, AskTimeout, StopReason, Terminated
from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.remote import NodeDown, NodeUnreachable, Remote, RemoteRef
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL, fast_detector

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).with_name("_echo_node.py")
#: Seconds a child may take to start (interpreter, imports, connect).
STARTUP = 30.0


def backend_name(anyio_backend: Any) -> str:
    name, options = anyio_backend
    return "uvloop" if options.get("loop_factory") else str(name)


class Child:
    """A node process: its lines of output are read, never waited on by
    sleeping."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None
        self._out = BufferedByteReceiveStream(process.stdout)

    async def line(self, timeout: float) -> str:
        """The next line of the child's output (without the newline).

        Raises:
            AssertionError: the child printed nothing more (it exited, with its
                standard error in the message) or took over ``timeout`` s.
        """
        try:
            with anyio.fail_after(timeout):
                data = await self._out.receive_until(b"\n", 65536)
        except (anyio.EndOfStream, anyio.IncompleteRead, TimeoutError):
            self.process.kill()
            stderr = b""
            if self.process.stderr is not None:
                with anyio.move_on_after(5):
                    async for chunk in self.process.stderr:
                        stderr += chunk
            raise AssertionError(
                f"the child node printed no line within {timeout} s; "
                f"stderr:\n{stderr.decode(errors='replace')}"
            ) from None
        return data.decode()


@asynccontextmanager
async def child_node(
    url: str, system: str, node: str, backend: str
) -> AsyncIterator[tuple[Child, str]]:
    """A child process hosting ``/user/echo`` as ``node``; yields it and its
    incarnation once it printed ``ready``. Killed when the block ends."""
    process = await anyio.open_process(
        [sys.executable, str(CHILD), url, system, node, backend]
    )
    try:
        child = Child(process)
        words = (await child.line(STARTUP)).split()
        assert words[:1] == ["ready"], words
        yield child, words[1]
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.move_on_after(10, shield=True):
            await process.aclose()


class Watcher(Actor):
    """Watches the ref it is told (replies ``"watching"``); records
    Terminated."""

    def __init__(self, seen: list[Terminated], got: anyio.Event) -> None:
        self.seen = seen
        self.got = got

    def receive(self, message: Any) -> Any:
        if isinstance(message, Terminated):
            self.seen.append(message)
            self.got.set()
            return None
        self.context.watch(message)
        return "watching"


#: The bound for NodeDown after kill -9: no-responders arrives as soon as the
#: server saw the connection close; the detector's bound (about 0.5 s plus a
#: check interval) is the fallback; generous for a loaded CI machine.
DOWN_BOUND = 10.0


async def test_a_node_in_another_process_answers_and_its_kill_is_node_down(
    nats_server: NatsServer, anyio_backend: Any
) -> None:
    system = "p" + new_nuid(10)
    async with (
        child_node(nats_server.url, system, "child", backend_name(anyio_backend)) as (
            child,
            incarnation,
        ),
        ActorSystem(
            remote=Remote(
                nats_server.url,
                system=system,
                node="parent",
                heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
                failure_detector=fast_detector,
            )
        ) as parent,
    ):
        ref = await parent.remote.lookup("child", "/user/echo", timeout=10)
        assert isinstance(ref, RemoteRef)
        assert ref.node.incarnation == incarnation
        assert await ref.ask("across", timeout=10) == "across"
        assert await ref.ask([1, 2.5, None], timeout=10) == [1, 2.5, None]

        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = parent.spawn(Watcher, seen, got)
        assert await watcher.ask(ref, timeout=10) == "watching"
        # The watch is in place on the child once an ask behind it returned.
        assert await ref.ask("behind the watch", timeout=10) == "behind the watch"

        child.process.kill()  # SIGKILL: no goodbye of any kind
        with anyio.fail_after(DOWN_BOUND):
            await got.wait()
        [terminated] = seen
        assert terminated.ref == ref
        assert isinstance(terminated.reason, NodeDown)
        assert terminated.reason.node == ref.node
        assert not ref.is_alive

        # An ask to the dead node fails at once, not after its timeout.
        with anyio.fail_after(5), pytest.raises(NodeUnreachable):
            await ref.ask("anyone?", timeout=60)
        # So does a fresh lookup by the node's name (nobody listens).
        with anyio.fail_after(5), pytest.raises((NodeUnreachable, AskTimeout)):
            await parent.remote.lookup("child", "/user/echo", timeout=3)


async def test_a_child_node_that_leaves_cleanly_reports_its_actors_stopped(
    nats_server: NatsServer, anyio_backend: Any
) -> None:
    system = "p" + new_nuid(10)
    async with (
        child_node(nats_server.url, system, "child", backend_name(anyio_backend)) as (
            child,
            _,
        ),
        ActorSystem(
            remote=Remote(nats_server.url, system=system, node="parent")
        ) as parent,
    ):
        ref = await parent.remote.lookup("child", "/user/echo", timeout=10)
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = parent.spawn(Watcher, seen, got)
        assert await watcher.ask(ref, timeout=10) == "watching"
        assert await ref.ask(1, timeout=10) == 1
        assert child.process.stdin is not None
        await child.process.stdin.aclose()  # the child leaves its system
        assert await child.line(10) == "left"
        with anyio.fail_after(10):
            await got.wait()
        [terminated] = seen
        assert terminated.ref == ref
        # The death notice travels before the node leaves: not NodeDown.
        assert terminated.reason == StopReason.SYSTEM


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
async def test_a_frozen_node_process_is_declared_down_by_the_failure_detector(
    nats_server: NatsServer, anyio_backend: Any
) -> None:
    # A stopped (SIGSTOP) process keeps its NATS connection and subscriptions
    # (no no-responders), but answers no heartbeat: only the phi accrual
    # detector can tell, within its bound.
    system = "p" + new_nuid(10)
    async with (
        child_node(nats_server.url, system, "child", backend_name(anyio_backend)) as (
            child,
            _,
        ),
        ActorSystem(
            remote=Remote(
                nats_server.url,
                system=system,
                node="parent",
                heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
                failure_detector=fast_detector,
            )
        ) as parent,
    ):
        ref = await parent.remote.lookup("child", "/user/echo", timeout=10)
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = parent.spawn(Watcher, seen, got)
        assert await watcher.ask(ref, timeout=10) == "watching"
        assert await ref.ask(1, timeout=10) == 1
        child.process.send_signal(signal.SIGSTOP)
        try:
            with anyio.fail_after(DOWN_BOUND):
                await got.wait()
        finally:
            child.process.kill()
        [terminated] = seen
        assert isinstance(terminated.reason, NodeDown)
        assert isinstance(ref, RemoteRef) and terminated.reason.node == ref.node
        assert math.isfinite(terminated.reason.phi)
        assert terminated.reason.phi >= fast_detector().threshold
        with anyio.fail_after(5), pytest.raises(NodeUnreachable):
            await ref.ask(2, timeout=60)


class Collector(Actor):
    """Collects what it is told; ``"get"`` returns it; sets ``flowing`` at
    the first."""

    def __init__(self, flowing: anyio.Event) -> None:
        self.items: list[object] = []
        self.flowing = flowing

    def receive(self, message: Any) -> Any:
        if message == "get":
            return list(self.items)
        self.items.append(message)
        self.flowing.set()
        return None


#: Reconnect at once and often: the restart takes a fraction of a second.
FAST_RECONNECT = {
    "reconnect_wait": 0.01,
    "max_reconnect_wait": 0.1,
    "reconnect_jitter": 0.01,
}


@asynccontextmanager
async def restarted_mid_stream(
    server: NatsServer,
) -> AsyncIterator[tuple[ActorSystem, ActorSystem, list[object], list[int], Any]]:
    """Two nodes ``a`` and ``b`` on ``server``; ``a`` tells ints to
    ``b``'s collector and asks it, while the server is stopped and started
    again once the tells flow. Yields after both clients reconnected and the
    traffic stopped: the nodes, the asks' outcomes (values or exceptions),
    the ints sent, and the collector's local ref. The server stops after
    a tell arrived and an ask was answered."""
    system = "p" + new_nuid(10)

    def node(name: str) -> Remote:
        return Remote(
            server.url, system=system, node=name, client_options=FAST_RECONNECT
        )

    outcomes: list[object] = []
    sent: list[int] = []
    stop_sending = anyio.Event()
    answered = anyio.Event()
    async with (
        ActorSystem(remote=node("a")) as a,
        ActorSystem(remote=node("b")) as b,
    ):
        flowing = anyio.Event()
        local = b.spawn(Collector, flowing, name="collector")
        collector = await a.remote.lookup("b", "/user/collector")

        async def tells() -> None:
            n = 0
            while not stop_sending.is_set():
                await collector.send(n)  # waits while the buffer is full
                sent.append(n)
                n += 1
                if n % 64 == 0:
                    await anyio.lowlevel.checkpoint()

        async def asks() -> None:
            n = 0
            while not stop_sending.is_set():
                try:
                    outcomes.append(await collector.ask(f"x{n}", timeout=2))
                    answered.set()
                except Exception as exc:
                    outcomes.append(exc)
                    await anyio.lowlevel.checkpoint()  # it may fail at once
                n += 1

        # Every ask ends within its timeout: the whole stream ends in time.
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(tells)
                tg.start_soon(asks)
                await flowing.wait()
                await answered.wait()
                await anyio.to_thread.run_sync(server.stop)
                await anyio.to_thread.run_sync(server.start)
                for system_ in (a, b):
                    client = system_.remote._client
                    assert client is not None
                    await client.flush(timeout=10)  # waits for the reconnection
                    assert client.statistics().reconnects == 1
                stop_sending.set()
        yield a, b, outcomes, sent, local


async def test_a_broker_restart_mid_stream_reconnects_and_no_ask_hangs(
    nats_server_factory: Any,
) -> None:
    server: NatsServer = nats_server_factory()
    async with restarted_mid_stream(server) as (a, _, outcomes, sent, local):
        # Each ask succeeded or failed with a clear error; none hung.
        # (The collector answers None to what it collects.)
        for outcome in outcomes:
            assert outcome is None or isinstance(
                outcome, AskTimeout | NodeUnreachable
            ), repr(outcome)
        assert None in outcomes
        assert a.remote.asks_in_flight == 0
        # At most once, in order: what arrived is an increasing subsequence of
        # what was sent.
        received = [x for x in await local.ask("get") if isinstance(x, int)]
        assert received, "no tell arrived"
        assert received == sorted(set(received))
        assert set(received) <= set(sent)


# A no-responders status while the peer resubscribes after the restart makes
# it a suspect, not gone: it answers a heartbeat and is alive again.
async def test_after_a_broker_restart_the_nodes_talk_again(
    nats_server_factory: Any,
) -> None:
    server: NatsServer = nats_server_factory()
    async with restarted_mid_stream(server) as (a, _, _, _, _):
        collector = await a.remote.lookup("b", "/user/collector", timeout=2)
        received = await collector.ask("get", timeout=2)
        assert isinstance(received, list)
