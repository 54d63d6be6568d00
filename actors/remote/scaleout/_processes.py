"""Node processes on this machine: ``python -m actors.node`` children.

Started with this interpreter and this ``sys.path`` (so they import what this
process imports), connected to this system's NATS server. They never outlive
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

import anyio

__all__ = ["NodeProcesses"]

#: Every started set not yet closed, killed at interpreter exit.
_live: weakref.WeakSet[NodeProcesses] = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for processes in list(_live):
        processes.kill()


class NodeProcesses:
    """``count`` node processes named ``names`` joining ``url``.

    Args:
        url: the NATS server URL.
        system: the system name (a subject token).
        prefix: the subject prefix.
        names: one node name per process.
        modules: module names or file paths each node hosts (``--module``).
        grace: seconds a node may take to hand back its work and leave.

    Raises:
        OSError: a process could not be started (those started are killed).
    """

    def __init__(
        self,
        url: str,
        *,
        system: str,
        prefix: str,
        names: Sequence[str],
        modules: Sequence[str],
        grace: float = 5.0,
    ) -> None:
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
            url,
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
        _live.add(self)
        try:
            for name in self.names:
                self.processes.append(
                    subprocess.Popen(
                        [*command, "--name", name],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        env=env,
                    )
                )
        except BaseException:
            self.kill()
            raise

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
