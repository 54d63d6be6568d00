"""What the crash tests of reliable delivery share (``test_processes``,
``test_fault_processes``, ``test_work_processes``, ``test_backpressure_processes``):

* the test's side: node processes started from a module of this package
  (``python -m``, this process's ``sys.path`` as their ``PYTHONPATH``)
  whose output lines are read (never waited on by sleeping), each
  SIGKILLed where the test decides, the ``nats-server`` SIGKILLed and
  started again on its port, the seeded plan of faults, the long mode's
  number of runs and seed from the environment;
* the children's side: ``run_child``, the event loop by name
  (``asyncio``, ``uvloop``, ``trio``), and ``Commands``, the lines the test
  writes to a child's stdin.

Every wait has a deadline (``LINE_TIMEOUT``) whose failure says which child
said what, with the end of its stderr.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.buffered import BufferedByteReceiveStream

from actors.nats import NatsServer

__all__ = [
    "BACKENDS",
    "LINE_TIMEOUT",
    "Commands",
    "Fault",
    "Node",
    "Plan",
    "child_env",
    "long_mode",
    "node_group",
    "restart_broker",
    "run_child",
    "start_node",
]

BACKENDS = ("asyncio", "uvloop", "trio")
#: Seconds a child may take to print its next line (start-up included).
LINE_TIMEOUT = 60.0


def long_mode(variable: str, seed_variable: str) -> tuple[int, int]:
    """``(runs, seed)`` from the environment: ``variable`` runs (default 1,
    the fast mode CI runs) and the seed of the random fault points
    (``seed_variable``, default 26)."""
    return int(os.environ.get(variable, "1")), int(os.environ.get(seed_variable, "26"))


def child_env() -> dict[str, str]:
    """This process's environment with its ``sys.path`` as ``PYTHONPATH``,
    so a child imports the test modules under the same names."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p or ".") for p in sys.path)
    return env


class Node:
    """A child process: its output lines, its stdin, its SIGKILL.

    Attributes:
        name: what the test calls it (in failure messages).
        process: the process.
        ready: the words of its first line (``ready ...``).
    """

    def __init__(self, name: str, process: anyio.abc.Process, err: Path) -> None:
        self.name = name
        self.process = process
        self.err = err
        self.ready: list[str] = []
        assert process.stdout is not None
        self._stdout = BufferedByteReceiveStream(process.stdout)

    @property
    def pid(self) -> int:
        """Its process id."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        """Whether it has not exited."""
        return self.process.returncode is None

    def stderr_tail(self) -> str:
        """The end of what its processes (this and the earlier ones of the
        same file) wrote to stderr."""
        try:
            return self.err.read_text()[-3000:]
        except FileNotFoundError:
            return ""

    async def line(self, timeout: float = LINE_TIMEOUT) -> list[str]:
        """The words of its next output line.

        Raises:
            AssertionError: it printed no line within ``timeout`` seconds,
                or its output ended (its stderr in the message).
        """
        try:
            with anyio.fail_after(timeout):
                raw = await self._stdout.receive_until(b"\n", 65536)
        except (anyio.EndOfStream, anyio.IncompleteRead, TimeoutError) as exc:
            raise AssertionError(
                f"{self.name} (pid {self.pid}) printed no line "
                f"({type(exc).__name__}; exit code {self.process.returncode}):\n"
                f"{self.stderr_tail()}"
            ) from None
        return raw.decode().split()

    async def expect(self, word: str) -> list[str]:
        """Its next line, which must start with ``word``.

        Raises:
            AssertionError: another line came, or none (as ``line``).
        """
        words = await self.line()
        assert words and words[0] == word, (self.name, words, self.stderr_tail())
        return words

    async def tell(self, *words: object) -> None:
        """Write one line to its stdin (see ``Commands``)."""
        stdin = self.process.stdin
        assert stdin is not None, f"{self.name} was started without stdin"
        await stdin.send((" ".join(map(str, words)) + "\n").encode())

    async def kill(self) -> float:
        """SIGKILL it and wait for it to end; return when (``time.time()``)."""
        at = time.time()
        assert self.alive, (f"{self.name} ended before its kill", self.stderr_tail())
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        return at

    async def close(self) -> None:
        """Kill it if it still runs, and reap it."""
        if self.alive:
            self.process.kill()
        await self.process.wait()


async def start_node(
    name: str, module: str, *args: object, err: Path, stdin: bool = False
) -> Node:
    """Start ``python -m module args...`` and return once it printed its
    ``ready`` line (its words in ``Node.ready``); its stderr goes to ``err``
    (appended).

    Raises:
        AssertionError: its first line was not ``ready ...``.
    """
    process = await anyio.open_process(
        [sys.executable, "-m", module, *map(str, args)],
        stdin=-1 if stdin else None,
        stdout=-1,
        stderr=err.open("ab"),
        env=child_env(),
    )
    node = Node(name, process, err)
    try:
        node.ready = await node.expect("ready")
    except BaseException:
        await node.close()
        raise
    return node


@asynccontextmanager
async def node_group() -> AsyncIterator[dict[str, Node]]:
    """A table of the test's nodes by name; each is killed (if it still
    runs) and reaped at the end, however the test ends."""
    nodes: dict[str, Node] = {}
    try:
        yield nodes
    finally:
        with anyio.CancelScope(shield=True):
            for node in nodes.values():
                await node.close()


async def restart_broker(server: NatsServer) -> float:
    """SIGKILL ``server`` and start it again on the same port (and store);
    return when it was killed. Blocking calls, so in a worker thread."""
    at = time.time()
    await anyio.to_thread.run_sync(lambda: server.stop(kill=True))
    await anyio.to_thread.run_sync(server.start)
    return at


@dataclass
class Fault:
    """One fault of a plan: ``target`` (a node's name, or ``"broker"``),
    done after ``after`` more progress lines."""

    target: str
    after: int


@dataclass
class Plan:
    """Seeded faults in a random order, each after a random number of
    progress lines (``spacing``: the least and the most).

    Attributes:
        faults: what is left to do, in order.
    """

    rng: random.Random
    targets: Sequence[str]
    spacing: tuple[int, int] = (5, 30)
    faults: list[Fault] = field(default_factory=list)

    def __post_init__(self) -> None:
        order = list(self.targets)
        self.rng.shuffle(order)
        self.faults = [Fault(t, self.rng.randint(*self.spacing)) for t in order]

    @property
    def done(self) -> bool:
        """Whether every fault was done."""
        return not self.faults

    def progress(self) -> Fault | None:
        """One more progress line: the fault due now, or None."""
        if not self.faults:
            return None
        fault = self.faults[0]
        fault.after -= 1
        if fault.after > 0:
            return None
        return self.faults.pop(0)

    @property
    def lines_left(self) -> int:
        """Progress lines until every fault is done."""
        return sum(fault.after for fault in self.faults)


# -- the children's side -----------------------------------------------------


def run_child(main: Callable[..., Awaitable[Any]], *args: Any, backend: str) -> None:
    """``anyio.run(main, *args)`` on the event loop named ``backend``
    (``asyncio``, ``uvloop`` or ``trio``).

    Raises:
        ValueError: an unknown backend name.
    """
    if backend == "uvloop":
        import uvloop

        options: dict[str, Any] = {"loop_factory": uvloop.new_event_loop}
        anyio.run(main, *args, backend="asyncio", backend_options=options)
    elif backend in ("asyncio", "trio"):
        anyio.run(main, *args, backend=backend)
    else:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")


class Commands:
    """The lines the test writes to this child's stdin, read in a worker
    thread (the same on every event loop)."""

    def __init__(self) -> None:
        self._stdin = anyio.wrap_file(sys.stdin)

    async def next(self) -> list[str]:
        """The words of the next line.

        Raises:
            EOFError: stdin ended (the test is gone).
        """
        line = await self._stdin.readline()
        if not line:
            raise EOFError("stdin ended")
        return line.split()
