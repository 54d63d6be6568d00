"""The phi accrual failure detector (Hayashibara et al.; as Akka's).

Instead of "down after N missed heartbeats", it keeps a window of the recent
intervals between heartbeats and says how suspicious the silence since the
last one is: ``phi = -log10(P(a heartbeat comes later than now))`` under a
normal distribution of the intervals, its mean lengthened by an acceptable
pause. phi 1 means a 10 % chance of being wrong, phi 10 a 1e-10 chance. A node
is available while phi is under the threshold.

The detector is pure: every method takes the time (seconds on any monotonic
clock) as an argument, so it is deterministic and tested with synthetic
heartbeat times.

Defaults (those of Akka's remote watch, with a shorter acceptable pause):
heartbeats every 1 s (``first_heartbeat_estimate``), threshold 10, at most
200 intervals kept, minimum standard deviation 0.1 s, acceptable pause 4 s.
With steady heartbeats a silent node's phi passes 10 about 5.6 s after its last
heartbeat arrived; a monitor checking once a second declares it down within
about 6.6 s.
"""

from __future__ import annotations

import math
from collections import deque

__all__ = [
    "DEFAULT_ACCEPTABLE_HEARTBEAT_PAUSE",
    "DEFAULT_FIRST_HEARTBEAT_ESTIMATE",
    "DEFAULT_MAX_SAMPLE_SIZE",
    "DEFAULT_MIN_STD_DEVIATION",
    "DEFAULT_THRESHOLD",
    "PhiAccrualFailureDetector",
    "phi",
]

DEFAULT_THRESHOLD = 10.0
DEFAULT_MAX_SAMPLE_SIZE = 200
DEFAULT_MIN_STD_DEVIATION = 0.1
DEFAULT_ACCEPTABLE_HEARTBEAT_PAUSE = 4.0
DEFAULT_FIRST_HEARTBEAT_ESTIMATE = 1.0

_LN10 = math.log(10.0)


def phi(elapsed: float, mean: float, std_deviation: float) -> float:
    """The suspicion level after ``elapsed`` seconds of silence, for intervals
    of ``mean`` and ``std_deviation`` seconds (``std_deviation`` > 0).

    Uses the logistic approximation of the normal CDF that Akka uses,
    ``P(later) = 1 / (1 + exp(z))`` with ``z = y (1.5976 + 0.070566 y^2)`` and
    ``y = (elapsed - mean) / std_deviation``, computed as
    ``log10(1 + exp(z))`` in a form that never overflows.
    """
    y = (elapsed - mean) / std_deviation
    z = y * (1.5976 + 0.070566 * y * y)
    # log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no overflow for any z.
    return (max(z, 0.0) + math.log1p(math.exp(-abs(z)))) / _LN10


def _seconds(name: str, value: object, *, zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{name} must be a number of seconds, not {type(value).__name__}"
        )
    if math.isnan(value) or math.isinf(value) or value < 0 or (value == 0 and not zero):
        raise ValueError(f"{name} must be {'>= 0' if zero else '> 0'}, not {value!r}")
    return float(value)


class PhiAccrualFailureDetector:
    """The failure detector of one monitored node.

    Args:
        threshold: phi at and above which the node is taken as down (> 0).
        max_sample_size: the most recent intervals kept (at least 1).
        min_std_deviation: the smallest standard deviation used, in seconds
            (> 0): steady heartbeats must not make a small delay look fatal.
        acceptable_heartbeat_pause: seconds of pause (garbage collection, a
            busy loop, a network hiccup) added to the mean interval (>= 0).
        first_heartbeat_estimate: the expected interval in seconds before any
            interval was measured (> 0); the history starts with two intervals
            of this mean and a quarter of it as deviation.

    Raises:
        TypeError / ValueError: a bad argument, naming it.
    """

    __slots__ = (
        "_intervals",
        "_last",
        "_squares",
        "_sum",
        "acceptable_heartbeat_pause",
        "min_std_deviation",
        "threshold",
    )

    def __init__(
        self,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        max_sample_size: int = DEFAULT_MAX_SAMPLE_SIZE,
        min_std_deviation: float = DEFAULT_MIN_STD_DEVIATION,
        acceptable_heartbeat_pause: float = DEFAULT_ACCEPTABLE_HEARTBEAT_PAUSE,
        first_heartbeat_estimate: float = DEFAULT_FIRST_HEARTBEAT_ESTIMATE,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise TypeError(
                f"threshold must be a number, not {type(threshold).__name__}"
            )
        if not threshold > 0 or math.isinf(threshold):
            raise ValueError(
                f"threshold must be a finite number > 0, not {threshold!r}"
            )
        if isinstance(max_sample_size, bool) or not isinstance(max_sample_size, int):
            raise TypeError(
                f"max_sample_size must be an int, not {type(max_sample_size).__name__}"
            )
        if max_sample_size < 1:
            raise ValueError(
                f"max_sample_size must be at least 1, not {max_sample_size}"
            )
        self.threshold = float(threshold)
        self.min_std_deviation = _seconds(
            "min_std_deviation", min_std_deviation, zero=False
        )
        self.acceptable_heartbeat_pause = _seconds(
            "acceptable_heartbeat_pause", acceptable_heartbeat_pause, zero=True
        )
        estimate = _seconds(
            "first_heartbeat_estimate", first_heartbeat_estimate, zero=False
        )
        self._intervals: deque[float] = deque(maxlen=max_sample_size)
        self._sum = 0.0
        self._squares = 0.0
        self._last: float | None = None
        deviation = estimate / 4
        self._record(estimate - deviation)
        self._record(estimate + deviation)

    def _record(self, interval: float) -> None:
        intervals = self._intervals
        if len(intervals) == intervals.maxlen:
            old = intervals[0]
            self._sum -= old
            self._squares -= old * old
        intervals.append(interval)
        self._sum += interval
        self._squares += interval * interval

    @property
    def last_heartbeat(self) -> float | None:
        """The time of the last heartbeat, or ``None`` before the first."""
        return self._last

    @property
    def mean(self) -> float:
        """The mean of the kept intervals, in seconds."""
        return self._sum / len(self._intervals)

    @property
    def std_deviation(self) -> float:
        """The standard deviation of the kept intervals, in seconds."""
        mean = self.mean
        variance = self._squares / len(self._intervals) - mean * mean
        return math.sqrt(variance) if variance > 0 else 0.0

    def heartbeat(self, now: float) -> None:
        """A heartbeat arrived at ``now``.

        Its interval joins the history only if the node was still available at
        ``now``: the first heartbeat after a long pause must not teach the
        detector that long pauses are normal. A heartbeat older than the last
        one is ignored.
        """
        last = self._last
        if last is not None:
            if now < last:
                return
            if self.phi(now) < self.threshold:
                self._record(now - last)
        self._last = now

    def phi(self, now: float) -> float:
        """The suspicion level at ``now`` (0.0 before the first heartbeat)."""
        last = self._last
        if last is None:
            return 0.0
        return phi(
            now - last,
            self.mean + self.acceptable_heartbeat_pause,
            max(self.std_deviation, self.min_std_deviation),
        )

    def is_available(self, now: float) -> bool:
        """Whether phi at ``now`` is under the threshold."""
        return self.phi(now) < self.threshold
