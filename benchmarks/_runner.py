"""Running rows: interleaved rounds, count checks, medians and spreads.

A round visits every (row, backend) pair once and runs each of the row's
implementations there once, one right after the other, in an order rotated by
one place per round (so no implementation always runs first or right after
another). Rounds are the outer loop: a row's samples are spread over the whole
run, so a burst of noise from elsewhere on the machine spoils one round of many
rows (the median discards it) rather than every round of one row.

A sample's count is checked against what its consumers received; a mismatch or
an exception marks the row as failed on that backend, and the run carries on
without it.
"""

from __future__ import annotations

import faulthandler
import gc
import statistics
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ._backends import Backend
from ._clock import use as use_clock
from ._registry import Impl, Row

__all__ = ["RowResult", "Settings", "Spread", "run_rows"]


@dataclass(frozen=True, slots=True)
class Settings:
    """How a run samples."""

    rounds: int  #: samples per implementation (the median is taken over them)
    quick: bool  #: small counts (``Row.quick_count``), no warm-up
    clock: str = "cpu"  #: what samples are timed with (see ``_clock``)
    #: seconds one sample may take before the process dumps every thread's
    #: stack and exits (a deadlocked row must fail CI, not hang it)
    sample_timeout: float = 300.0


@dataclass(frozen=True, slots=True)
class Spread:
    """A median with the smallest and largest value it was taken from."""

    median: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(statistics.median(values), min(values), max(values))

    def scaled(self, factor: float) -> Spread:
        return Spread(self.median * factor, self.min * factor, self.max * factor)


@dataclass(slots=True)
class RowResult:
    """One row on one backend: every implementation's samples, in round order."""

    row: Row
    backend: str
    count: int  #: items per sample
    impls: tuple[str, ...]  #: the implementations that ran, declaration order
    seconds: dict[str, list[float]] = field(default_factory=dict)
    error: str | None = None  #: why the row failed on this backend, if it did

    def per_item(self, impl: str) -> Spread:
        """Nanoseconds per item of one implementation."""
        return Spread.of(self.seconds[impl]).scaled(1e9 / self.count)

    def ratio(self, impl: str, other: str) -> Spread:
        """Time ratio ``impl / other`` (below 1: ``impl`` is faster).

        Taken round by round (samples that ran next to each other), then the
        median and min-max of those per-round ratios.
        """
        pairs = zip(self.seconds[impl], self.seconds[other], strict=True)
        return Spread.of([a / b for a, b in pairs])

    def fastest(self) -> tuple[Spread, str] | None:
        """The subject against the fastest other implementation, round by round.

        In each round the subject's time is divided by the smallest time any
        other implementation took in that round on this backend; the result
        is the median and min-max of those ratios (below 1: the subject beat
        every other), with the implementation that was fastest in the most
        rounds (the first declared on a tie). None when the row has no other
        implementation here or no samples yet.
        """
        subject = self.row.subject
        others = [n for n in self.impls if n != subject]
        if not others or not self.seconds.get(subject):
            return None
        ratios, wins = [], dict.fromkeys(others, 0)
        for round_, mine in enumerate(self.seconds[subject]):
            best = min(others, key=lambda n: self.seconds[n][round_])
            wins[best] += 1
            ratios.append(mine / self.seconds[best][round_])
        return Spread.of(ratios), max(others, key=wins.__getitem__)

    @property
    def ok(self) -> bool:
        return self.error is None


class CountMismatch(Exception):
    """A sample's consumers received a different number of items than were sent."""


Progress = Callable[[str], None]


def run_rows(
    rows: Sequence[Row],
    backends: Sequence[Backend],
    settings: Settings,
    progress: Progress,
) -> list[RowResult]:
    """Run every row on every backend it has implementations for."""
    use_clock(settings.clock)
    results = [
        _result(row, backend, settings)
        for row in rows
        for backend in backends
        if row.impls_on(backend.name)
    ]
    by_name = {b.name: b for b in backends}
    if not settings.quick:
        # Warm-up: imports, the interpreter's specialised bytecode, allocator
        # pools. Counts are still checked, timings thrown away.
        started = time.perf_counter()
        for result in results:
            _guarded(result, by_name[result.backend], settings, warm_up=True)
        progress(f"warm-up: {time.perf_counter() - started:.1f} s")
    for round_ in range(settings.rounds):
        started = time.perf_counter()
        for result in results:
            if result.ok:
                _guarded(result, by_name[result.backend], settings, round_=round_)
        failed = sum(not r.ok for r in results)
        progress(
            f"round {round_ + 1}/{settings.rounds}: {len(results)} row/backend "
            f"pairs, {time.perf_counter() - started:.1f} s"
            + (f", {failed} failed" if failed else "")
        )
    for index, result in enumerate(results, 1):
        progress(f"[{index:>3}/{len(results)}] {_summary(result)}")
    return results


def _result(row: Row, backend: Backend, settings: Settings) -> RowResult:
    impls = row.impls_on(backend.name)
    count = row.quick_count if settings.quick else row.count
    result = RowResult(row, backend.name, count, tuple(i.name for i in impls))
    for impl in impls:
        result.seconds[impl.name] = []
    return result


def _guarded(
    result: RowResult,
    backend: Backend,
    settings: Settings,
    *,
    warm_up: bool = False,
    round_: int = 0,
) -> None:
    """Run one round of a row (or its warm-up); record a failure, never raise."""
    row = result.row
    impls = row.impls_on(backend.name)
    shift = round_ % len(impls)
    try:
        for impl in impls[shift:] + impls[:shift]:
            if warm_up:
                _sample(backend, impl, row.quick_count, settings)
            else:
                elapsed = _sample(backend, impl, result.count, settings)
                result.seconds[impl.name].append(elapsed)
    except CountMismatch as exc:
        result.error = str(exc)
    except Exception as exc:
        result.error = "".join(traceback.format_exception_only(exc)).strip()
        traceback.print_exc()


def _sample(backend: Backend, impl: Impl, count: int, settings: Settings) -> float:
    gc.collect()  # no sample pays for the garbage of the one before it
    # A watchdog thread, not a cancel scope: it costs the event loop nothing.
    faulthandler.dump_traceback_later(settings.sample_timeout, exit=True)
    try:
        sample = backend.run(impl.sample, count)
    finally:
        faulthandler.cancel_dump_traceback_later()
    if sample.received != count:
        raise CountMismatch(
            f"{impl.name} on {backend.name}: sent {count}, received {sample.received}"
        )
    return sample.elapsed


def _summary(result: RowResult) -> str:
    head = f"{result.row.name} on {result.backend}:"
    if not result.ok:
        return f"{head} FAILED: {result.error}"
    parts = [f"{n} {result.per_item(n).median:,.0f} ns" for n in result.impls]
    return f"{head} " + ", ".join(parts)
