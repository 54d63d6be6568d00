"""Node processes on this machine: ``python -m actors.node`` children.

Started with this interpreter and this ``sys.path`` (so they import what this
process imports), connected to this system's NATS server with this node's
connection options and cluster secret, which each child reads from a pipe it
inherits (see ``_handoff``): no secret is on a command line. They never outlive
their parent: ``NodeProcesses.close`` stops them (SIGTERM, then SIGKILL
after a grace period), an ``atexit`` hook kills any left, and each child
leaves when its standard input reaches end-of-file, which happens when this
process dies in any way, ``kill -9`` included (the pipe's only writer is
gone).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import time
import weakref
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

import anyio

from ._handoff import Handoff
from ._hosting import importing

__all__ = ["NodeProcesses"]

#: Every started set not yet closed, killed at interpreter exit.
_live: weakref.WeakSet[NodeProcesses] = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for processes in list(_live):
        processes.kill()


def _without_credentials(url: str) -> str:
    """``url`` less its ``user:password@`` or ``token@`` (for a command line)."""
    try:
        parts = urlsplit(url if "://" in url else f"nats://{url}")
        host = parts.hostname or "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        netloc = host if parts.port is None else f"{host}:{parts.port}"
    except ValueError:
        return "nats://127.0.0.1"  # the child takes the handoff's URLs anyway
    return urlunsplit((parts.scheme, netloc, "", "", ""))


class NodeProcesses:
    """Node processes named ``names`` joining the servers of ``handoff``.

    Args:
        handoff: how they connect (servers, client options, secret), handed
            to each through an inherited pipe (``--options-fd``).
        system: the system name (a subject token).
        prefix: the subject prefix.
        names: one node name per process.
        modules: module names or file paths each node hosts (``--module``).
        grace: seconds a node may take to hand back its work and leave.

    Raises:
        OSError: a process could not be started (those started are killed).
        RuntimeError: this process is importing a module it hosts (a node
            process's ``--module``), whose top-level code starts node
            processes: each would import it and start more, without end (the
            script's main code belongs under ``if __name__ == "__main__":``,
            as multiprocessing requires).
    """

    def __init__(
        self,
        handoff: Handoff,
        *,
        system: str,
        prefix: str,
        names: Sequence[str],
        modules: Sequence[str],
        grace: float = 5.0,
    ) -> None:
        if importing:
            raise RuntimeError(
                f"node processes cannot start while this process imports "
                f"{importing[-1]!r}, a module it hosts: its top-level code "
                "starts them, and each would import it and start more, without "
                "end; put the script's main code under "
                "if __name__ == '__main__': (as multiprocessing requires)"
            )
        self.names = list(names)
        self.grace = grace
        self.processes: list[subprocess.Popen[bytes]] = []
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(p or os.curdir) for p in sys.path]
        )
        command = [
            sys.executable,
            "-m",
            "actors.node",
            "--connect",
            _without_credentials(handoff.servers[0]),
            "--system",
            system,
            "--prefix",
            prefix,
            "--exit-on-stdin-eof",
            "--grace",
            str(grace),
        ]
        for module in modules:
            command += ["--module", module]
        data = handoff.to_json()
        _live.add(self)
        try:
            for name in self.names:
                self.processes.append(self._start(command, name, env, data))
        except BaseException:
            self.kill()
            raise

    @staticmethod
    def _start(
        command: list[str], name: str, env: dict[str, str], data: bytes
    ) -> subprocess.Popen[bytes]:
        # The handoff through a pipe only the child inherits: written after
        # the start (the child reads it at once), then closed.
        read_end, write_end = os.pipe()
        try:
            process = subprocess.Popen(
                [*command, "--name", name, "--options-fd", str(read_end)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                env=env,
                pass_fds=(read_end,),
            )
        finally:
            os.close(read_end)
        try:
            with open(write_end, "wb", closefd=True) as pipe:
                pipe.write(data)
        except BrokenPipeError:
            pass  # it died at once: its exit code says so
        return process

    def exit_code(self, name: str) -> int | None:
        """The exit code of the process of node ``name``, or None while it
        runs."""
        return self.processes[self.names.index(name)].poll()

    @property
    def pids(self) -> list[int]:
        """The processes' ids."""
        return [process.pid for process in self.processes]

    def kill(self) -> None:
        """Kill every process now (SIGKILL) and reap it."""
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)  # else stuck in the kernel: nothing more to do
            if process.stdin is not None:
                process.stdin.close()
        _live.discard(self)

    def _terminate(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + self.grace
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.0, deadline - time.monotonic()))
        self.kill()

    async def close(self) -> None:
        """Ask every process to leave (SIGTERM: a node hands back its work);
        kill those still running after ``grace`` seconds. Shielded: it always
        completes."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._terminate)
