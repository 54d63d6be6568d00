"""Node processes on a nats-server that requires credentials and TLS with
client certificates (trustme's): ``python -m actors.node`` takes ``--user``
(its password from the environment or a file), ``--nkey``, ``--tls-ca``,
``--tls-cert`` and ``--tls-key``, and ``spawn_pool(processes=N)`` hands its
children the parent's options, none of them on a command line or in the
environment."""

from __future__ import annotations

import os
import secrets
import ssl
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import Remote

from ._process import child_env, node_process
from ._workers import Echo
from .conftest import WORKERS

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc"),
]


class Secured:
    """A server requiring TLS (client certificates verified) and a user
    (password or NKey), and what a node needs to join it."""

    def __init__(self, tmp_path: Path, start: Callable[..., NatsServer]) -> None:
        trustme = pytest.importorskip("trustme")
        nkeys = pytest.importorskip("nkeys")
        ca = trustme.CA()
        self.password = secrets.token_urlsafe(16)
        self.seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
        public = nkeys.from_seed(bytearray(self.seed)).public_key.decode()
        files = {}
        for name, pem in [
            ("ca.pem", ca.cert_pem),
            ("server.pem", (server := ca.issue_cert("127.0.0.1")).cert_chain_pems[0]),
            ("server.key", server.private_key_pem),
            ("node.pem", (client := ca.issue_cert("node@test")).cert_chain_pems[0]),
            ("node.key", client.private_key_pem),
        ]:
            files[name] = tmp_path / name
            pem.write_to_path(files[name])
        self.seed_file = tmp_path / "node.nk"
        self.seed_file.write_bytes(self.seed + b"\n")
        self.seed_file.chmod(0o600)
        self.password_file = tmp_path / "password"
        self.password_file.write_text(self.password + "\n")
        self.password_file.chmod(0o600)
        self.server = start(
            config=(
                f'tls {{ cert_file: "{files["server.pem"]}", key_file: '
                f'"{files["server.key"]}", ca_file: "{files["ca.pem"]}", '
                "verify: true }\n"
                "authorization { users = [ "
                f'{{user: node, password: "{self.password}"}}, {{nkey: "{public}"}}'
                " ] }\n"
            )
        )
        self.tls = {
            "tls_ca_file": str(files["ca.pem"]),
            "tls_cert_file": str(files["node.pem"]),
            "tls_key_file": str(files["node.key"]),
        }
        self.tls_args = [
            "--tls-ca",
            self.tls["tls_ca_file"],
            "--tls-cert",
            self.tls["tls_cert_file"],
            "--tls-key",
            self.tls["tls_key_file"],
        ]

    def remote(self, system: str, node: str, **options: Any) -> Remote:
        return Remote(
            self.server.url,
            system=system,
            node=node,
            client_options={"user": "node", "password": self.password, **self.tls},
            **options,
        )

    def exposed(self, pid: int) -> list[str]:
        """The secrets found in the command line or environment of ``pid``."""
        seen = []
        for part in ("cmdline", "environ"):
            data = Path(f"/proc/{pid}/{part}").read_bytes()
            for secret in (self.password.encode(), self.seed):
                if secret in data:
                    seen.append(f"{part}: {secret[:4]!r}...")
        return seen


@pytest.fixture
def secured(tmp_path: Path, nats_server_factory: Callable[..., NatsServer]) -> Secured:
    return Secured(tmp_path, nats_server_factory)


async def _spawn_and_ask(system: ActorSystem, node: str) -> None:
    ref = await system.remote.spawn(node, Echo, "a", timeout=20)
    assert await ref.ask("args", timeout=10) == [["a"], {}]


async def test_a_node_joins_with_a_user_whose_password_is_in_the_environment(
    secured: Secured, system_name: str
) -> None:
    env = {"ACTORS_NATS_PASSWORD": secured.password}
    args = ["--user", "node", *secured.tls_args]
    async with (
        ActorSystem(remote=secured.remote(system_name, "main")) as main,
        node_process(secured.server.url, system_name, "w", *args, env=env) as child,
    ):
        await _spawn_and_ask(main, "w")
        # In the environment the operator gave it, on no command line.
        assert secured.exposed(child.process.pid) == [
            f"environ: {secured.password.encode()[:4]!r}..."
        ]


async def test_a_node_joins_with_a_password_file_or_an_nkey_seed_file(
    secured: Secured, system_name: str
) -> None:
    with_password = ["--user", "node", "--password-file", str(secured.password_file)]
    with_nkey = ["--nkey", str(secured.seed_file)]
    async with (
        ActorSystem(remote=secured.remote(system_name, "main")) as main,
        node_process(
            secured.server.url, system_name, "p", *with_password, *secured.tls_args
        ) as by_password,
        node_process(
            secured.server.url, system_name, "k", *with_nkey, *secured.tls_args
        ) as by_nkey,
    ):
        await _spawn_and_ask(main, "p")
        await _spawn_and_ask(main, "k")
        for child in (by_password, by_nkey):
            assert secured.exposed(child.process.pid) == []


async def _exit_of(*args: str) -> tuple[int, str]:
    command = [sys.executable, "-m", "actors.node", *args]
    env = child_env()
    env.pop("ACTORS_NATS_PASSWORD", None)
    with anyio.fail_after(60):
        done = await anyio.run_process(command, env=env, check=False)
    return done.returncode, done.stderr.decode()


async def test_a_node_without_the_credentials_exits_saying_why(
    secured: Secured, system_name: str
) -> None:
    url = secured.server.url
    code, err = await _exit_of("--connect", url, "--system", system_name)
    assert code != 0 and ("SSL" in err or "certificate" in err), err
    code, err = await _exit_of(
        "--connect", url, "--system", system_name, *secured.tls_args
    )
    assert code != 0 and "Authorization" in err, err
    code, err = await _exit_of("--connect", url, "--user", "node")
    assert code != 0 and "ACTORS_NATS_PASSWORD" in err, err
    key = secured.tls["tls_key_file"]
    code, err = await _exit_of("--connect", url, "--tls-key", key)
    assert code != 0 and "--tls-key needs --tls-cert" in err, err


async def test_pool_processes_get_the_parent_s_credentials_off_their_command_lines(
    secured: Secured, system_name: str
) -> None:
    async with ActorSystem(remote=secured.remote(system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, processes=2)
        await pool.wait_ready(timeout=60)
        answered = {await pool.ask("pid", timeout=10) for _ in range(8)}
        assert answered <= set(pool.pids)
        for pid in pool.pids:
            assert secured.exposed(pid) == []
        pool.stop()
        await pool.join()


async def test_a_tls_context_cannot_be_handed_to_node_processes(
    secured: Secured, system_name: str
) -> None:
    context = ssl.create_default_context(cafile=secured.tls["tls_ca_file"])
    context.load_cert_chain(secured.tls["tls_cert_file"], secured.tls["tls_key_file"])
    remote = Remote(
        secured.server.url,
        system=system_name,
        node="main",
        client_options={"user": "node", "password": secured.password, "tls": context},
    )
    async with ActorSystem(remote=remote) as main:
        with pytest.raises(TypeError, match="tls_ca_file"):
            main.remote.spawn_pool(Echo, processes=1)
        # With nodes started otherwise, the context is fine.
        async with node_process(
            secured.server.url,
            system_name,
            "w",
            "--password-file",
            str(secured.password_file),
            "--user",
            "node",
            *secured.tls_args,
            modules=(WORKERS,),
        ):
            await _spawn_and_ask(main, "w")
