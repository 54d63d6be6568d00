"""The cluster secret of node processes: ``python -m actors.node
--secret-file FILE`` (one key per line, a file only its owner can read, as
Erlang's cookie file), and ``spawn_pool(processes=N)`` handing its children
its ``Remote(secret=...)`` off their command lines and environments, with
its node options (its share above all: ``--share`` on the command line)."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import anyio
import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import NodeUnreachable, Remote

from ._process import child_env, node_process
from ._workers import Echo

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc"),
]


def secret_file(path: Path, *keys: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(b"# the shop's cluster secret\n" + b"\n".join(keys) + b"\n")
    path.chmod(mode)
    return path


def main_node(url: str, system: str, secret: object) -> ActorSystem:
    return ActorSystem(remote=Remote(url, system=system, node="main", secret=secret))


async def test_a_node_with_the_secret_file_joins_and_one_with_another_cannot(
    nats_server: NatsServer, system_name: str, tmp_path: Path
) -> None:
    old, new = secrets.token_hex(16).encode(), secrets.token_hex(16).encode()
    rotating = secret_file(tmp_path / "rotating", new, old)
    other = secret_file(tmp_path / "other", secrets.token_hex(16).encode())
    url = nats_server.url
    async with (
        main_node(url, system_name, [old, new]) as main,
        node_process(url, system_name, "w", "--secret-file", str(rotating)),
        node_process(url, system_name, "x", "--secret-file", str(other)),
    ):
        # w seals with `new`, which main accepts; main seals with `old`,
        # which w accepts (a rotation under way).
        ref = await main.remote.spawn("w", Echo, "a", timeout=20)
        assert await ref.ask("args", timeout=10) == [["a"], {}]
        # x's key is another: nothing main sends it is taken, nor the reverse.
        with pytest.raises(NodeUnreachable):
            await main.remote.spawn("x", Echo, timeout=1)


async def _exit_of(*args: str) -> tuple[int, str]:
    command = [sys.executable, "-m", "actors.node", "--connect", *args]
    with anyio.fail_after(60):
        done = await anyio.run_process(command, env=child_env(), check=False)
    return done.returncode, done.stderr.decode()


async def test_a_secret_file_others_can_read_or_without_a_good_key_is_refused(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    key = secrets.token_hex(16).encode()
    url = nats_server.url
    readable = secret_file(tmp_path / "readable", key, mode=0o644)
    code, err = await _exit_of(url, "--secret-file", str(readable))
    assert code != 0 and "accessible to others" in err and "chmod 600" in err, err
    empty = secret_file(tmp_path / "empty")
    code, err = await _exit_of(url, "--secret-file", str(empty))
    assert code != 0 and "holds no key" in err, err
    short = secret_file(tmp_path / "short", b"too short")
    code, err = await _exit_of(url, "--secret-file", str(short))
    assert code != 0 and "--secret-file" in err and "16" in err, err
    code, err = await _exit_of(url, "--secret-file", str(tmp_path / "missing"))
    assert code != 0 and "cannot read" in err, err


async def test_pool_processes_get_the_secret_off_their_command_lines(
    nats_server: NatsServer, system_name: str
) -> None:
    key = secrets.token_bytes(32)
    async with main_node(nats_server.url, system_name, key) as main:
        pool = main.remote.spawn_pool(Echo, processes=1)
        await pool.wait_ready(timeout=60)
        [pid] = pool.pids
        assert await pool.ask("pid", timeout=10) == pid
        for part in ("cmdline", "environ"):
            assert key not in Path(f"/proc/{pid}/{part}").read_bytes()
        assert main.remote.bad_input == {}
        pool.stop()
        await pool.join()


async def test_pool_processes_take_their_parents_share(
    nats_server: NatsServer, system_name: str
) -> None:
    # The parent's share (not the default) goes down with the handoff: the
    # child advertises it when it joins the pool.
    remote = Remote(nats_server.url, system=system_name, node="main", share=24)
    async with ActorSystem(remote=remote) as main:
        pool = main.remote.spawn_pool(Echo, processes=1)
        await pool.wait_ready(timeout=60)
        children = {
            peer: stats.share_advertised
            for peer, stats in main.remote.statistics().peers.items()
        }
        assert set(children.values()) == {24}, children
        assert main.remote.bad_input == {}
        pool.stop()
        await pool.join()


async def test_a_share_out_of_range_on_the_command_line_is_refused() -> None:
    code, err = await _exit_of("nats://127.0.0.1:1", "--share", "0")
    assert code == 2 and "share must be at least 1" in err, err
