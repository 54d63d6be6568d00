"""Remote actors end to end: two (or three) actor systems in one process,
joined through one real ``nats-server``, talk with the local API."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
import msgspec
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorStopped,
    ActorSystem,
    AskTimeout,
    DeadLetter,
    MailboxFull,
    StopReason,
    SystemNotRunning,
    Telemetry,
    Terminated,
)
from actors.nats import NatsServer, connect
from actors.nats._protocol import new_nuid
from actors.remote import (
    ActorNotFound,
    NodeAddress,
    NodeDown,
    NodeUnreachable,
    RefAddress,
    Remote,
    RemoteActorError,
    RemoteRef,
)
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL, fast_detector

from . import _nodes

pytestmark = pytest.mark.anyio


class Ping(msgspec.Struct):
    n: int
    reply_to: ActorRef[Any] | None = None


class Pong(msgspec.Struct):
    n: int


class Boom(msgspec.Struct):
    text: str


class Hidden(msgspec.Struct):
    """Makes the handler raise an exception of a type the codec does not know."""


class Block(msgspec.Struct):
    """Parks the handler until the test's event is set."""


class NotRegistered(msgspec.Struct):
    n: int


class SecretError(Exception):
    pass


TYPES = [(Ping, "t.Ping"), (Pong, "t.Pong"), (Boom, "t.Boom"), (Hidden, "t.Hidden")]
TYPES += [(Block, "t.Block")]


class Echo(Actor):
    """Replies with what it gets; raises on Boom and Hidden; parks on Block."""

    def __init__(self, release: anyio.Event | None = None) -> None:
        self.release = release
        self.entered = anyio.Event()

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Boom):
            raise ValueError(message.text)
        if isinstance(message, Hidden):
            raise SecretError("hidden")
        if isinstance(message, Block):
            assert self.release is not None
            self.entered.set()
            await self.release.wait()
            return "released"
        if isinstance(message, Ping) and message.reply_to is not None:
            message.reply_to.tell(Pong(message.n))
            return None
        return message


class Collector(Actor):
    """Collects what it is told; ``"get"`` returns the list; sets ``done``
    when ``expected`` items arrived."""

    def __init__(self, expected: int = 0, done: anyio.Event | None = None) -> None:
        self.items: list[Any] = []
        self.expected = expected
        self.done = done

    def receive(self, message: Any) -> Any:
        if message == "get":
            return self.items
        self.items.append(message)
        if self.done is not None and len(self.items) == self.expected:
            self.done.set()
        return None


remote = partial(_nodes.remote, types=TYPES)
two_nodes = partial(_nodes.two_nodes, types=TYPES)


async def test_a_remote_ask_returns_the_reply_across_systems(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        assert isinstance(ref, RemoteRef)
        assert ref.path == "/user/echo" and ref.name == "echo"
        assert ref.node == b.remote.node
        assert ref == RemoteRef(
            a.remote, RefAddress("b", b.remote.node.incarnation, "/user/echo")
        )
        assert await ref.ask(Pong(7)) == Pong(7)
        assert await ref.ask("text") == "text"
        assert await ref.ask(None) is None


async def test_tells_from_one_node_to_another_arrive_in_order(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Collector, name="collector")
        ref = await a.remote.lookup("b", "/user/collector")
        for n in range(2000):
            ref.tell(n)
        for n in range(2000, 2100):
            await ref.send(n)
        # The ask travels behind the tells: they are all in by then.
        assert await ref.ask("get") == list(range(2100))


async def test_a_ref_inside_a_message_is_a_working_remote_ref(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo")
        done = anyio.Event()
        collector = a.spawn(Collector, 10, done, name="collector")
        ref = await a.remote.lookup("b", "/user/echo")
        for n in range(10):
            ref.tell(Ping(n, reply_to=collector))
        with anyio.fail_after(10):
            await done.wait()
        assert await collector.ask("get") == [Pong(n) for n in range(10)]


async def test_a_handler_exception_is_raised_as_its_own_type_at_the_asker(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        with pytest.raises(ValueError, match="bad input") as info:
            await ref.ask(Boom("bad input"))
        assert any("remote traceback" in note for note in info.value.__notes__)
        with pytest.raises(RemoteActorError) as remote_info:
            await ref.ask(Hidden())
        assert remote_info.value.type_name.endswith("SecretError")
        assert remote_info.value.message == "hidden"
        # The actor was restarted by its supervisor and serves on.
        assert await ref.ask(1) == 1


async def test_a_remote_ask_without_a_reply_in_time_raises_ask_timeout(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        release = anyio.Event()
        b.spawn(Echo, release, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        with pytest.raises(AskTimeout):
            await ref.ask(Block(), timeout=0.2)
        release.set()
        # The late reply comes before this one (FIFO) and is counted.
        assert await ref.ask(2) == 2
        assert a.remote.late_replies == 1


async def test_an_ask_to_a_node_nobody_listens_on_fails_at_once(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, _):
        gone = RemoteRef[Any](a.remote, RefAddress("b", "0123456789abcdef", "/user/x"))
        with anyio.fail_after(5):  # NATS's no-responders, not the timeout
            with pytest.raises(NodeUnreachable):
                await gone.ask(1, timeout=60)
        # Suspect now (nobody listens): not alive, best effort.
        assert not gone.is_alive
        # A cancelled ask is cancelled, not failed (it is a checkpoint).
        with anyio.CancelScope() as scope:
            scope.cancel()
            await gone.ask(2, timeout=60)
        assert scope.cancelled_caught
        with anyio.fail_after(5), pytest.raises(NodeUnreachable):
            await gone.ask(3, timeout=60)
        # Later tells to it come back from NATS: dead letters here, counted.
        letters: list[DeadLetter] = []
        got = anyio.Event()

        def seen(letter: DeadLetter) -> None:
            letters.append(letter)
            got.set()

        with a.dead_letters.subscribe(seen):
            gone.tell(1)
            with anyio.fail_after(5):
                await got.wait()
        assert [(x.message, x.reason) for x in letters] == [(1, "node unreachable")]


async def test_lookup_confirms_the_actor_or_raises_a_clear_error(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        echo = b.spawn(Echo, name="echo")
        with pytest.raises(ActorNotFound):
            await a.remote.lookup("b", "/user/nobody")
        with anyio.fail_after(5):
            with pytest.raises(NodeUnreachable):
                await a.remote.lookup("nobody", "/user/echo", timeout=60)
            with pytest.raises(NodeUnreachable):
                await a.remote.lookup(
                    NodeAddress("b", "0123456789abcdef"), "/user/echo", timeout=60
                )
        # By incarnation, and by a registered name.
        by_address = await a.remote.lookup(b.remote.node, "/user/echo")
        assert await by_address.ask(3) == 3
        b.remote.register("greeter", echo)
        by_name = await a.remote.lookup("b", "greeter")
        assert by_name.path == "greeter"
        assert await by_name.ask(4) == 4
        # This node itself: the local ref.
        assert await b.remote.lookup("b", "/user/echo") == echo


async def test_an_ask_of_a_path_with_no_actor_raises_actor_stopped(
    nats_server: NatsServer,
) -> None:
    # A ref names an actor that ran there: as a local ask of a stopped
    # actor, ActorStopped (a lookup is what says ActorNotFound).
    async with two_nodes(nats_server) as (a, b):
        ref = RemoteRef[Any](
            a.remote, RefAddress("b", b.remote.node.incarnation, "/user/nobody")
        )
        with pytest.raises(ActorStopped, match="/user/nobody"):
            await ref.ask(1)


async def test_a_tell_of_an_unregistered_type_raises_type_error_at_the_call(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        with pytest.raises(TypeError, match="NotRegistered"):
            ref.tell(NotRegistered(1))
        with pytest.raises(TypeError, match="NotRegistered"):
            await ref.ask(NotRegistered(1))
        with pytest.raises(TypeError, match="object"):
            ref.tell(Ping(1, reply_to=object()))  # type: ignore[arg-type]
        assert await ref.ask(5) == 5


async def test_a_tell_to_a_missing_actor_is_a_dead_letter_where_it_lands(
    nats_server: NatsServer,
) -> None:
    # And one to a full mailbox waits there for room (the sender's share
    # bounds what waits: tests/remote/test_backpressure.py), not a dead letter.
    async with two_nodes(nats_server) as (a, b):
        letters: list[DeadLetter] = []
        first = anyio.Event()

        def seen(letter: DeadLetter) -> None:
            letters.append(letter)
            first.set()

        b.dead_letters.subscribe(seen)
        release = anyio.Event()
        instances: list[Echo] = []

        def make() -> Echo:
            instances.append(Echo(release))
            return instances[-1]

        echo = b.spawn(make, name="echo", capacity=1)
        ref = await a.remote.lookup("b", "/user/echo")
        missing = RemoteRef[Any](
            a.remote, RefAddress("b", b.remote.node.incarnation, "/user/nobody")
        )
        missing.tell(1)
        ref.tell(Block())
        with anyio.fail_after(10):
            await first.wait()
            await instances[0].entered.wait()  # Block taken: the mailbox is empty
        assert letters[0].reason == "actor not found"
        assert letters[0].recipient.path == "/user/nobody"
        for n in range(3):  # one fits the mailbox, two do not
            ref.tell(n)

        def held() -> int:
            return b.remote.statistics().peers[a.remote.node].share_held

        # 0 in the mailbox (they arrive in order), 1 and 2 held on b.
        with anyio.fail_after(10):
            while held() < 2:
                await anyio.lowlevel.checkpoint()
        assert echo.statistics().queued_messages == 1 and held() == 2
        release.set()
        with anyio.fail_after(10):
            while b.remote.statistics().peers[a.remote.node].share_outstanding:
                await anyio.lowlevel.checkpoint()
        assert len(letters) == 1 and a.dead_letters.count == 0


class Parks(Actor):
    """Parks in its handler until ``release`` is set; ``entered`` says so."""

    def __init__(self, entered: anyio.Event, release: anyio.Event) -> None:
        self.entered = entered
        self.release = release

    async def receive(self, message: Any) -> None:
        self.entered.set()
        await self.release.wait()


@pytest.mark.parametrize("kind", ["local", "remote"])
async def test_a_tell_to_a_stopped_actor_is_a_dead_letter_through_either_ref(
    nats_server: NatsServer, kind: str
) -> None:
    # Location transparency (issue 22): neither ref's tell raises for an actor
    # that stopped; the message is a dead letter on the actor's node.
    async with two_nodes(nats_server) as (a, b):
        letters: list[DeadLetter] = []
        changed = anyio.Event()

        def seen(letter: DeadLetter) -> None:
            nonlocal changed
            letters.append(letter)
            changed.set()
            changed = anyio.Event()

        b.dead_letters.subscribe(seen)
        entered, release = anyio.Event(), anyio.Event()
        parked = b.spawn(Parks, entered, release, name="parked")
        ref = parked if kind == "local" else await a.remote.lookup("b", "/user/parked")
        parked.tell("park")
        await entered.wait()
        parked.stop()  # stopping: it is still in its handler
        with anyio.fail_after(10):
            waiting = changed
            ref.tell(1)  # no exception, on either ref
            await waiting.wait()
            release.set()
            await parked.join()
            waiting = changed
            ref.tell(2)
            await waiting.wait()
        assert [(x.recipient.path, x.message) for x in letters] == [
            ("/user/parked", 1),
            ("/user/parked", 2),
        ]
        # The reason: a remote tell names an actor by its path, and the node
        # finds no live actor there (stopping or gone alike).
        reason = "actor stopped" if kind == "local" else "actor not found"
        assert [x.reason for x in letters] == [reason, reason]
        assert a.dead_letters.count == 0


async def test_a_remote_stop_stops_the_actor(nats_server: NatsServer) -> None:
    async with two_nodes(nats_server) as (a, b):
        echo = b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        ref.stop()
        with anyio.fail_after(10):
            await echo.join()
        with pytest.raises(ActorStopped):
            await ref.ask(1)
        with pytest.raises(ActorStopped):
            await echo.ask(1)  # the same error as a local ask


async def test_malformed_frames_are_counted_and_the_node_serves_on(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b), connect(nats_server.url) as raw:
        b.spawn(Echo, name="echo")
        subject = f"actors.{b.remote.system_name}.b"
        for payload in (b"\xc1garbage", b"", msgspec.msgpack.encode([9, None, []])):
            await raw.publish(subject, payload)
        await raw.publish(
            subject,
            msgspec.msgpack.encode([1, None, [[0, "/user/echo", "no.such.tag", 1]]]),
        )
        await raw.flush()
        ref = await a.remote.lookup("b", "/user/echo")
        assert await ref.ask(6) == 6
        assert b.remote.bad_input == {
            "malformed frame": 2,
            "unknown version": 1,
            "undecodable message": 1,
        }


async def test_a_program_that_is_not_a_node_can_ask_through_the_name_subject(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (_, b), connect(nats_server.url) as raw:
        b.spawn(Echo, name="echo")
        frame = msgspec.msgpack.encode([1, None, [[1, "/user/echo", 1, "str", "Ada"]]])
        msg = await raw.request(f"actors.{b.remote.system_name}.b", frame, timeout=5)
        version, sender, envelopes = msgspec.msgpack.decode(msg.data)
        assert (version, sender) == (1, [b.remote.node.node, b.remote.node.incarnation])
        assert envelopes == [[2, 1, "str", "Ada"]]


async def test_leaving_a_system_with_remote_messages_in_flight_ends(
    nats_server: NatsServer,
) -> None:
    system = "t" + new_nuid(10)
    release = anyio.Event()
    outcome: list[BaseException] = []

    async def ask_blocked(ref: ActorRef[Any]) -> None:
        try:
            await ref.ask(1, timeout=60)
        except Exception as exc:
            outcome.append(exc)

    with anyio.fail_after(20):
        b_remote = remote(nats_server.url, system, "b", share=100_000)
        async with ActorSystem(remote=b_remote) as b:
            b.spawn(Echo, release, name="echo")
            b.spawn(Collector, name="collector")
            async with anyio.create_task_group() as tg:
                a_remote = remote(
                    nats_server.url, system, "a", capacity=100_000, share=100_000
                )
                async with ActorSystem(remote=a_remote) as a:
                    a.spawn(Collector, name="keep")  # an actor on this side too
                    echo = await a.remote.lookup("b", "/user/echo")
                    collector = await a.remote.lookup("b", "/user/collector")
                    echo.tell(Block())  # the ask waits behind it
                    for n in range(20_000):
                        collector.tell(n)
                    tg.start_soon(ask_blocked, echo)
                    while not a.remote.asks_in_flight:
                        await anyio.lowlevel.checkpoint()
            # Leaving `a` failed its ask in flight and ended its tasks.
            assert [type(exc) for exc in outcome] == [SystemNotRunning]
            with pytest.raises(SystemNotRunning):
                echo.tell(1)
            release.set()


async def test_an_embedded_server_is_started_and_other_systems_join_it() -> None:
    async with ActorSystem(remote=Remote(system="emb", node="a", types=TYPES)) as a:
        assert a.remote.url.startswith("nats://127.0.0.1:")
        async with ActorSystem(
            remote=Remote(a.remote.url, system="emb", node="b", types=TYPES)
        ) as b:
            b.spawn(Echo, name="echo")
            ref = await a.remote.lookup("b", "/user/echo")
            assert await ref.ask(Pong(1)) == Pong(1)


async def test_the_system_checks_its_remote_argument() -> None:
    with pytest.raises(TypeError, match="remote"):
        ActorSystem(remote=object())  # type: ignore[arg-type]
    remote = Remote("nats://127.0.0.1:1", client_options={"connect_timeout": 0.2})
    with pytest.raises(Exception):  # noqa: B017 - NoServersError
        async with ActorSystem(remote=remote):
            pass
    with pytest.raises(SystemNotRunning):
        _ = remote.node


class Watcher(Actor):
    """Watches the refs it is told (and replies ``"watching"``); unwatches
    the refs wrapped in a tuple ``("unwatch", ref)``; records Terminated."""

    def __init__(self, seen: list[Terminated], got: anyio.Event) -> None:
        self.seen = seen
        self.got = got

    def receive(self, message: Any) -> Any:
        if isinstance(message, Terminated):
            self.seen.append(message)
            self.got.set()
            return None
        if message == "ping":
            return "pong"
        if isinstance(message, tuple):
            self.context.unwatch(message[1])
            return "unwatched"
        self.context.watch(message)
        return "watching"


async def test_a_watcher_gets_terminated_with_the_reason_when_a_remote_actor_stops(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo")
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = a.spawn(Watcher, seen, got)
        ref = await a.remote.lookup("b", "/user/echo")
        assert await watcher.ask(ref) == "watching"
        assert await watcher.ask(ref) == "watching"  # twice: still one Terminated
        ref.stop()  # behind the watch on the same pair
        with anyio.fail_after(10):
            await got.wait()
            # Joined later, the node no longer knows the actor.
            assert isinstance(await ref.join(), ActorNotFound)
        assert [(t.ref, t.reason) for t in seen] == [(ref, StopReason.NORMAL)]
        assert await watcher.ask("ping") == "pong"
        assert len(seen) == 1


async def test_a_failed_remote_actor_reports_its_exception_to_watchers(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo", restart="temporary")
        ref = await a.remote.lookup("b", "/user/echo")
        joined: list[object] = []

        async def join() -> None:
            joined.append(await ref.join())

        async with anyio.create_task_group() as tg:
            tg.start_soon(join)
            while not a.remote.watching:
                await anyio.lowlevel.checkpoint()
            ref.tell(Boom("fatal"))  # behind the watch
        [reason] = joined
        assert isinstance(reason, ValueError) and reason.args == ("fatal",)


async def test_an_unwatched_remote_actor_delivers_no_terminated(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        echo = b.spawn(Echo, name="echo")
        b.spawn(Echo, name="other")
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = a.spawn(Watcher, seen, got)
        ref = await a.remote.lookup("b", "/user/echo")
        other = await a.remote.lookup("b", "/user/other")
        assert await watcher.ask(ref) == "watching"
        assert await watcher.ask(("unwatch", ref)) == "unwatched"
        assert await watcher.ask(other) == "watching"
        echo.stop()
        await echo.join()
        other.stop()
        with anyio.fail_after(10):
            await got.wait()
        assert [t.ref for t in seen] == [other]


async def test_watching_an_actor_of_a_node_nobody_listens_on_delivers_node_down(
    nats_server: NatsServer,
) -> None:
    # No-responders makes the node a suspect; it never answers a heartbeat,
    # so the failure detector declares it down within its bound.
    options = {
        "heartbeat_interval": FAST_HEARTBEAT_INTERVAL,
        "failure_detector": fast_detector,
    }
    async with two_nodes(nats_server, **options) as (a, _):
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = a.spawn(Watcher, seen, got)
        gone = RemoteRef[Any](a.remote, RefAddress("b", "0123456789abcdef", "/user/x"))
        assert await watcher.ask(gone) == "watching"
        with anyio.fail_after(10):
            await got.wait()
        assert isinstance(seen[0].reason, NodeDown)
        assert seen[0].ref == gone


async def test_a_silent_node_is_declared_down_and_its_watchers_get_node_down(
    nats_server: NatsServer,
) -> None:
    system = "t" + new_nuid(10)
    options = {
        "heartbeat_interval": FAST_HEARTBEAT_INTERVAL,
        "failure_detector": fast_detector,
    }
    silent = NodeAddress.new("silent")
    async with (
        connect(nats_server.url) as raw,
        ActorSystem(remote=remote(nats_server.url, system, "a", **options)) as a,
    ):
        # Someone listens on the silent node's inbox (no no-responders), and
        # never answers a heartbeat.
        await raw.subscribe(f"actors.{system}.silent.{silent.incarnation}")
        await raw.flush()
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = a.spawn(Watcher, seen, got)
        ref = RemoteRef[Any](
            a.remote, RefAddress(silent.node, silent.incarnation, "/user/x")
        )
        assert await watcher.ask(ref) == "watching"
        with anyio.fail_after(10):
            await got.wait()
        [terminated] = seen
        assert isinstance(terminated.reason, NodeDown)
        assert terminated.reason.node == silent
        assert not ref.is_alive


async def test_an_ask_queued_when_the_remote_actor_stops_raises_actor_stopped(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        release = anyio.Event()
        echo = b.spawn(Echo, release, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        outcome: list[BaseException] = []

        async def ask() -> None:
            try:
                await ref.ask(1)
            except Exception as exc:
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            ref.tell(Block())
            tg.start_soon(ask)
            with anyio.fail_after(10):
                while not b.remote.serving:  # queued behind the Block on b
                    await anyio.lowlevel.checkpoint()
            echo.stop()
            release.set()
        assert [type(exc) for exc in outcome] == [ActorStopped]


async def test_a_node_leaving_answers_the_asks_it_was_serving(
    nats_server: NatsServer,
) -> None:
    system = "t" + new_nuid(10)
    release = anyio.Event()
    outcome: list[object] = []

    async def ask(ref: ActorRef[Any]) -> None:
        try:
            outcome.append(await ref.ask(1, timeout=30))
        except Exception as exc:
            outcome.append(type(exc))

    async with (
        ActorSystem(remote=remote(nats_server.url, system, "a")) as a,
        anyio.create_task_group() as tg,
    ):
        with anyio.fail_after(10):
            async with ActorSystem(remote=remote(nats_server.url, system, "b")) as b:
                b.spawn(Echo, release, name="echo")
                ref = await a.remote.lookup("b", "/user/echo")
                ref.tell(Block())
                tg.start_soon(ask, ref)
                while not b.remote.serving:  # queued behind the Block on b
                    await anyio.lowlevel.checkpoint()
                release.set()
            # b answered (the actor replied, or the ask failed as the actor
            # stopped) before it left: no timeout, no NodeUnreachable.
    assert outcome in ([1], [ActorStopped])


async def test_a_tell_to_a_full_outbound_buffer_raises_mailbox_full_and_send_waits(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server, capacity=2) as (a, b):
        b.spawn(Collector, name="collector")
        ref = await a.remote.lookup("b", "/user/collector")
        ref.tell(0)
        ref.tell(1)  # no checkpoint since: the writer has not run
        with pytest.raises(MailboxFull, match="outbound buffer"):
            ref.tell(2)
        with anyio.fail_after(10):
            await ref.send(2)  # waits for the writer to make room
        assert await ref.ask("get") == [0, 1, 2]


async def test_a_cancelled_remote_ask_leaves_nothing_behind(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        release = anyio.Event()
        b.spawn(Echo, release, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        with anyio.move_on_after(0.1) as scope:
            await ref.ask(Block(), timeout=30)
        assert scope.cancelled_caught
        assert a.remote.asks_in_flight == 0
        release.set()
        assert await ref.ask(8) == 8  # the late reply came first, counted
        assert a.remote.late_replies == 1


async def test_remote_arguments_are_checked_naming_them(
    nats_server: NatsServer,
) -> None:
    with pytest.raises(ValueError, match="system"):
        Remote(system="a.b")
    with pytest.raises(ValueError, match="node"):
        Remote(node="")
    with pytest.raises(TypeError, match="url"):
        Remote(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="capacity"):
        Remote(capacity=0)
    with pytest.raises(ValueError, match="heartbeat_interval"):
        Remote(heartbeat_interval=0)
    async with two_nodes(nats_server) as (a, b):
        echo = b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        with pytest.raises(ValueError, match="timeout"):
            await ref.ask(1, timeout=0)
        with pytest.raises(TypeError, match="node"):
            await a.remote.lookup(1, "/user/echo")
        with pytest.raises(ValueError, match="path"):
            await a.remote.lookup("b", "")
        with pytest.raises(ValueError, match="name"):
            b.remote.register("/user/x", echo)
        with pytest.raises(TypeError, match="ref"):
            b.remote.register("x", ref)  # another node's actor
        b.remote.register("x", echo)
        with pytest.raises(ValueError, match="registered already"):
            b.remote.register("x", b.spawn(Echo))
        with pytest.raises(RuntimeError, match="once"):
            await a.remote.start(None)


async def test_a_traced_system_serves_remote_tells_and_asks(
    nats_server: NatsServer,
) -> None:
    system = "t" + new_nuid(10)
    async with (
        ActorSystem(
            remote=remote(nats_server.url, system, "a"), telemetry=Telemetry()
        ) as a,
        ActorSystem(remote=remote(nats_server.url, system, "b")) as b,
    ):
        a.spawn(Collector, name="collector")
        ref = await b.remote.lookup("a", "/user/collector")
        ref.tell(1)
        assert await ref.ask("get") == [1]


async def test_sequential_asks_keep_one_failure_detector_for_their_peer(
    nats_server: NatsServer,
) -> None:
    # Each ask depends on its peer while it runs; between two asks the peer
    # stays monitored (a linger), so its detector is not made afresh per ask.
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        assert await ref.ask(0) == 0
        monitor = a.remote._parts.monitor
        state = monitor._peers[ref.node]
        # The detector made at the start is a stand-in until the first
        # heartbeat ack (intervals are measured from it): wait for that one.
        with anyio.fail_after(10):
            while not state.answered:
                await anyio.lowlevel.checkpoint()
        detector = state.detector
        for n in range(1, 20):
            answered = state.answered
            assert await ref.ask(n) == n
            assert monitor._peers[ref.node] is state
            if state.answered and not answered:
                # The first heartbeat ack (whenever the round came) replaces
                # the stand-in detector, once (HeartbeatMonitor.acked).
                detector = state.detector
            assert state.detector is detector
        assert a.remote._parts.monitor.depended == {}
        assert state.released is not None  # lingering, then dropped
