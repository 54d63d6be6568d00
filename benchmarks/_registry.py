"""The registry of benchmark rows.

A row is one workload (``channel/8P1C/bounded/receive_many``). It has several
implementations: the same workload written with our API (``ours``) and with the
tools a user would pick instead (``anyio``, ``asyncio.Queue``, ``trio``, ...).
Each implementation is an async function that runs one sample: given a count of
items, it sends that many, times the part worth timing itself, and returns a
:class:`Sample` with the elapsed seconds and the items its consumers actually
received. The harness runs it in a fresh event loop of the backend under test
and checks ``received == count`` on every sample.

Row modules (``benchmarks/rows/*.py``) call :func:`register` at import time.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final, NamedTuple

__all__ = [
    "ALL_BACKENDS",
    "ASYNCIO_LOOPS",
    "TRIO_ONLY",
    "Impl",
    "Row",
    "Sample",
    "SampleFn",
    "all_rows",
    "register",
    "select",
]

#: Backend names, as ``--backend`` spells them.
ALL_BACKENDS: Final = frozenset({"asyncio", "uvloop", "trio"})
ASYNCIO_LOOPS: Final = frozenset({"asyncio", "uvloop"})
TRIO_ONLY: Final = frozenset({"trio"})


class Sample(NamedTuple):
    """What one run of one implementation reports."""

    elapsed: float  #: seconds in the timed part, on ``benchmarks._clock.now()``
    received: int  #: items the consumers received (checked against the count)


#: One sample of one implementation: ``await sample(count)``.
SampleFn = Callable[[int], Awaitable[Sample]]


@dataclass(frozen=True, slots=True)
class Impl:
    """One way to write a row's workload.

    A thread-based implementation (Pykka) is still an async function: it simply
    blocks the event loop it was started in until its threads are done.
    """

    name: str  #: ``ours``, ``anyio``, ``asyncio.Queue``, ``trio``, ``pykka``
    sample: SampleFn
    backends: frozenset[str] = ALL_BACKENDS  #: where it can run


@dataclass(frozen=True, slots=True)
class Row:
    """A workload and its implementations."""

    name: str  #: slash-separated, group first: ``channel/1P8C/unbounded/receive``
    description: str  #: one sentence, shown by ``python -m benchmarks list``
    count: int  #: items per sample in a full run
    quick_count: int  #: items per sample with ``--quick``
    impls: tuple[Impl, ...]
    unit: str = "item"  #: what one counted item is (``item``, ``pair``, ``firing``)
    subject: str = "ours"  #: the implementation every other one is compared with

    @property
    def group(self) -> str:
        """The first part of the name (``channel``, ``mailbox``, ``ping_pong``)."""
        return self.name.split("/", 1)[0]

    def impls_on(self, backend: str) -> tuple[Impl, ...]:
        """The implementations that run on ``backend``, in declaration order."""
        return tuple(impl for impl in self.impls if backend in impl.backends)


_ROWS: dict[str, Row] = {}
_NAME = re.compile(r"[A-Za-z0-9_.]+(/[A-Za-z0-9_.]+)*")


def register(row: Row) -> Row:
    """Add a row to the suite.

    Returns:
        The row, so a module can keep a reference.

    Raises:
        ValueError: the name is malformed or taken, the counts are not positive,
            implementation names repeat, or the subject is not among them.
    """
    if not _NAME.fullmatch(row.name):
        raise ValueError(f"bad row name {row.name!r}: use letters, digits, _ . /")
    if row.name in _ROWS:
        raise ValueError(f"row {row.name!r} is registered twice")
    if row.count < 1 or row.quick_count < 1:
        raise ValueError(f"row {row.name!r}: counts must be positive")
    names = [impl.name for impl in row.impls]
    if len(set(names)) != len(names):
        raise ValueError(f"row {row.name!r}: implementation names repeat: {names}")
    if row.subject not in names:
        raise ValueError(f"row {row.name!r}: subject {row.subject!r} not in {names}")
    for impl in row.impls:
        unknown = impl.backends - ALL_BACKENDS
        if unknown:
            raise ValueError(f"row {row.name!r}: unknown backends {sorted(unknown)}")
    _ROWS[row.name] = row
    return row


def all_rows() -> list[Row]:
    """Every registered row, in registration order."""
    return list(_ROWS.values())


def select(patterns: Iterable[str]) -> list[Row]:
    """The rows matching any pattern (all rows if there is none).

    A pattern with a glob character (``* ? [``) must match the whole name
    (``channel/*/bounded/*``); one without is a substring (``8P1C``).
    """
    patterns = list(patterns)
    if not patterns:
        return all_rows()
    return [r for r in _ROWS.values() if any(_matches(r.name, p) for p in patterns)]


def _matches(name: str, pattern: str) -> bool:
    if any(ch in pattern for ch in "*?["):
        return fnmatchcase(name, pattern)
    return pattern in name
