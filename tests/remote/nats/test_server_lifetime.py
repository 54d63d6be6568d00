"""An embedded nats-server never outlives the process that started it: not
after ``kill -9`` of that process, and not cut short when the (short-lived)
thread that started it ends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the parent-death signal is Linux's (elsewhere: see _server.py)",
)

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pid: int, deadline: float) -> bool:
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)  # polling another process's end: no event to wait on
    return True


def _parent(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_the_embedded_server_ends_when_its_process_is_killed() -> None:
    # The server of ActorSystem(remote=Remote()), started as the system
    # starts it (from a worker thread of the event loop).
    parent = _parent(
        """
        import os
        import anyio
        from actors import ActorSystem
        from actors.remote import Remote

        def children():
            found = []
            for task in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{task}/children") as f:
                    found += f.read().split()
            return found

        async def main():
            async with ActorSystem(remote=Remote()):
                (server,) = children()
                print(server, flush=True)
                await anyio.sleep(60)

        anyio.run(main)
        """
    )
    server_pid = 0
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        assert _alive(server_pid)
        parent.kill()
        parent.wait(10)
        assert _wait_gone(server_pid, time.monotonic() + 10), "nats-server orphaned"
    finally:
        parent.kill()
        parent.wait(10)
        if server_pid:
            _kill(server_pid)


def test_a_server_started_from_a_thread_that_ended_keeps_running() -> None:
    # The kernel's parent-death signal follows the thread that forked: the
    # server must not die with the thread that asked for it.
    parent = _parent(
        """
        import os, threading, time
        from actors.nats import NatsServer

        server = NatsServer()
        thread = threading.Thread(target=server.start)
        thread.start()
        thread.join()
        # Until that thread has left the kernel too (the server keeps threads
        # of its own in this process, so count none but that one).
        gone = f"/proc/self/task/{thread.native_id}"
        deadline = time.monotonic() + 10
        while os.path.exists(gone) and time.monotonic() < deadline:
            time.sleep(0.01)
        print(server.pid, flush=True)
        print(server.running, flush=True)
        server.close()
        """
    )
    server_pid = 0
    try:
        assert parent.stdout is not None
        server_pid = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "True"
        assert parent.wait(20) == 0
    finally:
        parent.kill()
        parent.wait(10)
        if server_pid:
            _kill(server_pid)
