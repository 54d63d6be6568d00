"""Node processes on a nats-server in operator mode (decentralized JWT
authentication, as ``nsc`` sets it up): ``python -m actors.node --creds FILE``
joins with a user JWT and its NKey seed, ``spawn_pool(processes=N)`` hands
its children the parent's ``creds_file``, and a user of an account the
operator never signed is refused with the server's reason."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import Remote

from ._jwt import Operator
from ._process import child_env, node_process
from ._workers import Echo

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc"),
]


class Decentralized:
    """A server trusting ``operator``, and a creds file for the test's own
    system."""

    def __init__(self, tmp_path: Path, start: Callable[..., NatsServer]) -> None:
        self.tmp_path = tmp_path
        self.operator = Operator()
        self.server = start(config=self.operator.config())
        self.main_creds = self.operator.creds(tmp_path / "main.creds")

    def remote(self, system: str) -> Remote:
        return Remote(
            self.server.url,
            system=system,
            node="main",
            client_options={"creds_file": str(self.main_creds)},
        )

    def seeds_exposed(self, pid: int, *creds: Path) -> list[str]:
        """The creds files' seeds found in the command line or environment of
        ``pid``."""
        seeds = [_seed_of(path) for path in creds]
        seen = []
        for part in ("cmdline", "environ"):
            data = Path(f"/proc/{pid}/{part}").read_bytes()
            seen += [f"{part}: {seed[:4]!r}..." for seed in seeds if seed in data]
        return seen


def _seed_of(creds: Path) -> bytes:
    lines = creds.read_text().splitlines()
    return lines[lines.index("-----BEGIN USER NKEY SEED-----") + 1].encode()


@pytest.fixture
def decentralized(
    tmp_path: Path, nats_server_factory: Callable[..., NatsServer]
) -> Decentralized:
    return Decentralized(tmp_path, nats_server_factory)


async def test_a_node_joins_with_a_creds_file_and_keeps_its_seed_off_its_command_line(
    decentralized: Decentralized, system_name: str
) -> None:
    creds = decentralized.operator.creds(decentralized.tmp_path / "node.creds")
    async with (
        ActorSystem(remote=decentralized.remote(system_name)) as main,
        node_process(
            decentralized.server.url, system_name, "w", "--creds", str(creds)
        ) as child,
    ):
        ref = await main.remote.spawn("w", Echo, "jwt", timeout=20)
        assert await ref.ask("args", timeout=10) == [["jwt"], {}]
        assert decentralized.seeds_exposed(child.process.pid, creds) == []


async def test_pool_processes_get_the_parent_s_creds_file(
    decentralized: Decentralized, system_name: str
) -> None:
    async with ActorSystem(remote=decentralized.remote(system_name)) as main:
        pool = main.remote.spawn_pool(Echo, processes=2)
        await pool.wait_ready(timeout=60)
        answered = {await pool.ask("pid", timeout=10) for _ in range(8)}
        assert answered <= set(pool.pids)
        for pid in pool.pids:
            assert decentralized.seeds_exposed(pid, decentralized.main_creds) == []
        pool.stop()
        await pool.join()


async def test_a_user_the_operator_never_signed_for_is_refused_saying_why(
    decentralized: Decentralized, system_name: str
) -> None:
    operator = decentralized.operator
    stranger = operator.creds(
        decentralized.tmp_path / "stranger.creds", account=operator.stranger
    )
    command = [
        sys.executable,
        "-m",
        "actors.node",
        "--connect",
        decentralized.server.url,
        "--system",
        system_name,
        "--creds",
        str(stranger),
    ]
    with anyio.fail_after(60):
        done = await anyio.run_process(command, env=child_env(), check=False)
    err = done.stderr.decode()
    assert done.returncode != 0 and "Authorization" in err, err
    # The trusted account's users still join.
    async with ActorSystem(remote=decentralized.remote(system_name)) as main:
        assert main.remote.node.node == "main"
