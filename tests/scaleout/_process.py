"""Node processes for the tests: ``python -m actors.node`` children whose
output lines are read (never waited on by sleeping), killed when done."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from .conftest import WORKERS

#: Seconds a node process may take to start (interpreter, imports, connect).
STARTUP = 30.0


def child_env() -> dict[str, str]:
    """This process's environment with its ``sys.path`` as PYTHONPATH, so a
    child imports the test modules under the same names."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p or ".") for p in sys.path)
    return env


class NodeProcess:
    """A ``python -m actors.node`` child."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None
        self._out = BufferedByteReceiveStream(process.stdout)

    async def line(self, timeout: float = STARTUP) -> str:
        """The next line of its output.

        Raises:
            AssertionError: it printed nothing more within ``timeout`` s.
        """
        try:
            with anyio.fail_after(timeout):
                data = await self._out.receive_until(b"\n", 65536)
        except (anyio.EndOfStream, anyio.IncompleteRead, TimeoutError):
            raise AssertionError(
                f"the node printed no line within {timeout} s "
                f"(exit code {self.process.returncode})"
            ) from None
        return data.decode()


@asynccontextmanager
async def node_process(
    url: str,
    system: str,
    name: str,
    *extra: str,
    modules: tuple[str, ...] = (WORKERS,),
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[NodeProcess]:
    """A node process (``env``: more environment variables); yields once it
    printed ``ready``. Killed at the end."""
    command = [
        sys.executable,
        "-m",
        "actors.node",
        "--connect",
        url,
        "--system",
        system,
        "--name",
        name,
        *extra,
    ]
    for module in modules:
        command += ["--module", module]
    process = await anyio.open_process(
        command, env={**child_env(), **(env or {})}, stderr=None
    )
    try:
        child = NodeProcess(process)
        words = (await child.line()).split()
        assert words[:2] == ["ready", name], words
        yield child
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.move_on_after(10, shield=True):
            await process.aclose()


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
