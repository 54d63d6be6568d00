"""The kill campaigns' child processes (``_durable_child.py``), shared by
the SQLite and JetStream runs (``test_processes``,
``test_jetstream_processes``): a child whose lines a thread reads (never by
sleeping); a writer started and its recovered counts taken, its acks read,
its SIGKILL and what it answered before, and the final check of every
acknowledged event against what a fresh process recovers.

A store is a SQLite file path or a JetStream stream name; ``extra`` are the
child's options that say where it is (``--nats URL``) and how it writes
(``--synchronous``).
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BACKENDS",
    "CHILD",
    "LINE_TIMEOUT",
    "Child",
    "Tally",
    "account",
    "acked_numbers",
    "kill",
    "outcome",
    "read_acks",
    "start_writer",
    "verify",
]

CHILD = Path(__file__).with_name("_durable_child.py")
BACKENDS = ("asyncio", "uvloop", "trio")
#: Seconds a child may take to print its next line (start-up included).
LINE_TIMEOUT = 60.0


class Child:
    """A child process whose lines are read by a thread (never by sleeping)."""

    def __init__(
        self,
        *args: str,
        sink: queue.Queue[tuple[str, str | None]] | None = None,
        name: str = "",
    ) -> None:
        #: With a sink, lines go there as (name, line) instead of to ``line()``.
        self.sink = sink
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        sink = self.sink
        for line in self.process.stdout:
            if sink is None:
                self.lines.put(line.rstrip("\n"))
            else:
                sink.put((self.name, line.rstrip("\n")))
        if sink is None:
            self.lines.put(None)
        else:
            sink.put((self.name, None))

    def line(self) -> str | None:
        """The next line, or None at the end of its output."""
        try:
            return self.lines.get(timeout=LINE_TIMEOUT)
        except queue.Empty:
            self.process.kill()
            raise AssertionError(
                f"the child printed nothing for {LINE_TIMEOUT} s"
            ) from None

    def rest(self) -> list[str]:
        """Every line until the end of its output."""
        found = []
        while (line := self.line()) is not None:
            found.append(line)
        return found

    def stderr(self) -> str:
        self.process.wait(LINE_TIMEOUT)
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()


@dataclass
class Tally:
    """What the kill runs saw."""

    runs: int = 0
    kills: int = 0
    events: int = 0
    acknowledged: int = 0
    losses: int = 0
    lost: list[str] = field(default_factory=list)


def verify(store: str, actors: int, *extra: str) -> dict[int, tuple[int, int]]:
    """Recover every ledger of ``store`` in a fresh process: each one's
    count and writers."""
    child = Child(store, "verify", "--actors", str(actors), *extra)
    lines = child.rest()
    assert child.process.wait(LINE_TIMEOUT) == 0, child.stderr()
    counts: dict[int, tuple[int, int]] = {}
    for line in lines:
        words = line.split()
        if words[0] == "count":
            counts[int(words[1])] = (int(words[2]), int(words[3]))
        else:
            assert words == ["raw", words[1], "ok"], line
    assert sorted(counts) == list(range(actors)), lines
    return counts


def start_writer(
    store: str,
    actors: int,
    backend: str,
    acked: dict[int, int],
    tally: Tally,
    run: int,
    *extra: str,
) -> Child:
    """A writer of ``actors`` ledgers on ``backend``, once it recovered them
    (a recovered count below what was acknowledged is a loss, counted) and
    said ``go``."""
    child = Child(store, "write", "--actors", str(actors), "--backend", backend, *extra)
    for _ in range(actors):
        words = (child.line() or "").split()
        assert words[0] == "ready", (words, child.stderr())
        index, recovered = int(words[1]), int(words[2])
        if recovered < acked[index]:
            tally.lost.append(f"run {run}: {index} {recovered} < {acked[index]}")
        tally.losses += max(0, acked[index] - recovered)
        acked[index] = max(acked[index], recovered)
    assert child.line() == "go"
    return child


def read_acks(child: Child, acked: dict[int, int], count: int) -> None:
    """Read ``count`` ack lines of ``child`` into ``acked`` (each ledger's
    acks increase)."""
    for _ in range(count):
        line = child.line()
        assert line is not None, child.stderr()
        words = line.split()
        assert words[0] == "ack", line
        index, n = int(words[1]), int(words[2])
        assert n > acked[index], line
        acked[index] = n


def kill(child: Child, acked: dict[int, int], tally: Tally) -> None:
    """SIGKILL ``child``; what it printed before it died was answered."""
    child.process.send_signal(signal.SIGKILL)
    for line in child.rest():
        words = line.split()
        if words[0] == "ack":
            acked[int(words[1])] = int(words[2])
    assert child.process.wait(LINE_TIMEOUT) == -signal.SIGKILL
    tally.kills += 1


def account(
    counts: dict[int, tuple[int, int]], acked: dict[int, int], tally: Tally, run: int
) -> None:
    """One run's end: every acknowledged event is among those recovered
    (``counts``, from ``verify``); a shortfall is a loss, counted."""
    for index in sorted(counts):
        count, writers = counts[index]
        if count < acked[index]:
            tally.lost.append(f"run {run}: {index} has {count} < {acked[index]}")
        tally.losses += max(0, acked[index] - count)
        tally.events += count
        tally.acknowledged += acked[index]
        assert writers >= 1
    tally.runs += 1


def outcome(children: list[Child]) -> tuple[list[str], list[str]]:
    """The lines of the child that stopped on a conflict and of the one that
    went on (asserting there is exactly one of each)."""
    outputs = [child.rest() for child in children]
    for child in children:
        assert child.process.wait(LINE_TIMEOUT) == 0, child.stderr()
    stopped = [out for out in outputs if "conflict 0" in out]
    survived = [out for out in outputs if "conflict 0" not in out]
    assert len(stopped) == 1 and len(survived) == 1, outputs
    return stopped[0], survived[0]


def acked_numbers(lines: list[str]) -> list[int]:
    return [int(line.split()[2]) for line in lines if line.startswith("ack")]
