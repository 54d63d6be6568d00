"""Under exactly the NATS permissions the docs recommend
(``docs_src/security/nats-server.conf``: a node's user may publish and
subscribe under ``actors.<system>.>`` and nowhere else), every remote
operation works: tell, ask, lookup, watch, remote spawn, and a pool across
processes (whose node processes get the parent's credentials); and a user
outside the scope can do nothing to the system: it sees none of its
frames, and what it publishes into it is refused by the server."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, Terminated
from actors.nats import NatsServer, PermissionsViolation, RequestTimeoutError, connect
from actors.node import host
from actors.remote import NodeUnreachable, Remote
from actors.testing import await_assert
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL, fast_detector

from ._workers import Echo
from .conftest import WORKERS

pytestmark = pytest.mark.anyio

CONFIG = Path(__file__).resolve().parents[2] / "docs_src/security/nats-server.conf"


class Users:
    """The passwords of the configuration's users (made per test)."""

    def __init__(self) -> None:
        # Letters first and hex only: nats-server's configuration parser reads
        # a value starting with digits and a dash as a date.
        self.node = "p" + secrets.token_hex(12)
        self.billing = "p" + secrets.token_hex(12)

    def shop(self, node: str, **options: Any) -> Remote:
        """A node of the system ``shop`` with the node user's credentials."""
        return Remote(
            self.url,
            system="shop",
            node=node,
            heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
            failure_detector=fast_detector,
            client_options={"user": "shop-node", "password": self.node},
            **options,
        )

    url = ""


@pytest.fixture
def users(
    nats_server_factory: Callable[..., NatsServer], monkeypatch: pytest.MonkeyPatch
) -> Users:
    made = Users()
    # The configuration reads the passwords from the server's environment.
    monkeypatch.setenv("SHOP_NODE_PASSWORD", made.node)
    monkeypatch.setenv("BILLING_PASSWORD", made.billing)
    made.url = nats_server_factory(config=CONFIG.read_text()).url
    return made


class Watcher(Actor):
    def __init__(self, target: Any, seen: list[Any], ended: anyio.Event) -> None:
        self.target = target
        self.seen = seen
        self.ended = ended

    def on_start(self) -> None:
        self.context.watch(self.target)

    def receive(self, message: Any) -> None:
        if isinstance(message, Terminated):
            self.seen.append(message)
            self.ended.set()


async def test_every_remote_operation_works_under_the_documented_permissions(
    users: Users,
) -> None:
    async with (
        ActorSystem(remote=users.shop("main")) as main,
        ActorSystem(remote=users.shop("w")) as w,
    ):
        host(w, [WORKERS])
        echo = w.spawn(Echo, name="echo")
        w.remote.register("echo", echo)
        # lookup: its reply comes under actors.shop.> too (not _INBOX).
        ref = await main.remote.lookup("w", "echo", timeout=10)
        ref.tell("told")
        assert await ref.ask("asked", timeout=10) == "asked"
        # remote spawn
        spawned = await main.remote.spawn("w", Echo, 1, name="spawned", timeout=10)
        assert await spawned.ask("args", timeout=10) == [[1], {}]
        # watch
        seen: list[Any] = []
        ended = anyio.Event()
        main.spawn(Watcher, spawned, seen, ended)
        await await_assert(lambda: _watching(main), timeout=10)
        spawned.stop()
        with anyio.fail_after(10):
            await ended.wait()
        assert seen[0].ref == spawned
        assert main.remote.bad_input == {} and w.remote.bad_input == {}


def _watching(system: ActorSystem) -> None:
    assert system.remote.watching == 1


async def test_a_pool_in_node_processes_works_under_the_documented_permissions(
    users: Users,
) -> None:
    # The node processes connect with the parent's user and password,
    # handed to them off their command lines.
    async with ActorSystem(remote=users.shop("main")) as main:
        pool = main.remote.spawn_pool(Echo, processes=1)
        await pool.wait_ready(timeout=60)
        assert await pool.ask("pid", timeout=10) == pool.pids[0]
        pool.stop()
        await pool.join()


async def test_a_user_outside_the_scope_can_do_nothing_to_the_system(
    users: Users,
) -> None:
    errors: list[Exception] = []
    async with (
        ActorSystem(remote=users.shop("main")) as main,
        ActorSystem(remote=users.shop("w")) as w,
        connect(
            users.url,
            user="billing",
            password=users.billing,
            error_callback=errors.append,
        ) as outsider,
    ):
        echo = w.spawn(Echo, name="echo")
        w.remote.register("echo", echo)
        ref = await main.remote.lookup("w", "echo", timeout=10)
        # It cannot listen to the system's frames...
        spy = await outsider.subscribe("actors.shop.>")
        # ...nor publish into them: a Stop of the guardian, garbage, a
        # lookup of its own.
        stop_user = b'[1, null, [[11, "/user"]]]'
        await outsider.publish("actors.shop.w", stop_user)
        await outsider.publish(f"actors.shop.w.{w.remote.node.incarnation}", b"junk")
        with pytest.raises(RequestTimeoutError):
            await outsider.request("actors.shop.w", b"[1, null, []]", timeout=0.5)
        await outsider.flush()
        assert await ref.ask("still here", timeout=10) == "still here"
        await outsider.flush()
        with pytest.raises(TimeoutError):
            await spy.next_msg(timeout=0.2)
        violations = [e for e in errors if isinstance(e, PermissionsViolation)]
        texts = " ".join(str(e) for e in violations).lower()
        assert "subscription" in texts and "publish" in texts, errors
        assert w.remote.bad_input == {} and echo.is_alive


async def test_a_node_with_another_systems_name_cannot_join(users: Users) -> None:
    # The node user's scope is the system "shop": as another system it can
    # neither be found nor find anyone.
    async with (
        ActorSystem(remote=users.shop("w")) as w,
        ActorSystem(
            remote=Remote(
                users.url,
                system="other",
                node="main",
                client_options={"user": "shop-node", "password": users.node},
            )
        ) as other,
    ):
        w.remote.register("echo", w.spawn(Echo, name="echo"))
        with pytest.raises(NodeUnreachable):
            await other.remote.lookup("w", "echo", timeout=0.5)
