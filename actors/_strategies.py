"""Supervisor strategies: what a parent does when a child fails.

Semantics follow Erlang/OTP's supervisor module: ``OneForOne``, ``OneForAll`` and
``RestForOne`` restart strategies, restart intensity (``max_restarts`` within
``within`` seconds, a sliding window over the supervisor's restarts), per-child
restart types (``permanent``, ``transient``, ``temporary``), plus Akka's decider
(exception type -> directive) and exponential backoff (Akka's restartWithBackoff).
"""

from __future__ import annotations

import enum
import math
import random
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ._log import FailureLogging, check_log_failures
from ._validation import check_seconds_type

__all__ = [
    "Backoff",
    "Directive",
    "OneForAll",
    "OneForOne",
    "RestForOne",
    "RestartType",
    "SupervisorStrategy",
]

RestartType = Literal["permanent", "transient", "temporary"]
RESTART_TYPES: tuple[RestartType, ...] = ("permanent", "transient", "temporary")


class Directive(enum.Enum):
    """What a supervisor does with a failed child (Akka's directives)."""

    #: Keep the instance and its state; go on with the next message. (An
    #: instance that failed in ``on_start`` / ``on_restart`` has nothing to
    #: resume, nor has a supervisor that escalated, having stopped its
    #: children: each is restarted instead, counted against the intensity.)
    RESUME = "resume"
    #: Replace the instance with a fresh one from the factory (same ref, same
    #: mailbox: queued messages survive).
    RESTART = "restart"
    #: Stop the child for good.
    STOP = "stop"
    #: Fail the supervisor itself with the child's exception, so its own parent
    #: decides.
    ESCALATE = "escalate"


Decider = Callable[[BaseException], Directive]


def check_strategy_attribute(owner: object, where: str) -> None:
    """Check an actor's (or actor class's) ``supervisor_strategy`` attribute:
    when an Actor subclass is defined, when an instance is built (an
    assignment in ``__init__``) and when a child fails (a later one).

    Raises:
        TypeError: it is set and is not a
            [``SupervisorStrategy``][actors.SupervisorStrategy].
    """
    strategy = getattr(owner, "supervisor_strategy", None)
    if strategy is not None and not isinstance(strategy, SupervisorStrategy):
        raise TypeError(
            f"{where}: supervisor_strategy must be a SupervisorStrategy "
            f"(OneForOne(), OneForAll(), RestForOne()) or None, not {strategy!r}"
        )


def _always_restart(exc: BaseException) -> Directive:
    return Directive.RESTART


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff between restarts, as Akka's restartWithBackoff.

    The n-th consecutive restart of a child (n = 0, 1, ...) waits
    ``min(max_delay, min_delay * 2**n)`` seconds, stretched by a random factor in
    ``[1, 1 + random_factor]``. Restarts are consecutive while each comes within
    ``2 * max_delay`` seconds of the previous one; after a longer quiet spell the
    count starts over at ``min_delay``. The wait begins once the failed instance
    has stopped (its children, timers and ``on_stop``); a stop requested during
    the wait wins. Under ``OneForAll`` / ``RestForOne`` the supervisor waits
    between stopping the siblings and starting them again.

    Args:
        min_delay: the first delay, in seconds (> 0).
        max_delay: the largest delay, in seconds (>= min_delay).
        random_factor: jitter, a fraction in [0, 1].

    Raises:
        ValueError: a value is out of range.
    """

    min_delay: float
    max_delay: float
    random_factor: float = 0.0

    def __post_init__(self) -> None:
        check_seconds_type("min_delay", self.min_delay)
        check_seconds_type("max_delay", self.max_delay)
        if isinstance(self.random_factor, bool) or not isinstance(
            self.random_factor, (int, float)
        ):
            raise TypeError(
                f"random_factor must be a number in [0, 1], not {self.random_factor!r}"
            )
        if not 0 < self.min_delay < math.inf:
            raise ValueError(
                f"min_delay must be > 0 and finite seconds, got {self.min_delay}"
            )
        if not self.min_delay <= self.max_delay < math.inf:
            raise ValueError(
                f"max_delay ({self.max_delay}) must be finite and >= min_delay "
                f"({self.min_delay})"
            )
        if not 0 <= self.random_factor <= 1:
            raise ValueError(
                f"random_factor must be within [0, 1], got {self.random_factor}"
            )

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """Seconds to wait before restart number ``attempt`` (counted from 0)."""
        base: float = min(self.max_delay, self.min_delay * 2.0 ** min(attempt, 62))
        return base * (1.0 + self.random_factor * rng())


@dataclass(frozen=True)
class SupervisorStrategy:
    """How a parent handles its children's failures.

    Args:
        max_restarts: restart intensity: the most restarts allowed within
            ``within`` seconds (>= 0). One more and the supervisor stops all its
            children and fails itself with the child's exception (escalation),
            as Erlang/OTP's supervisors.
        within: the intensity period, in seconds (> 0): a sliding window, so
            failures spaced further apart never add up.
        decider: maps a child's exception to a
            [``Directive``][actors.Directive]; a mapping from exception types
            (matched along the MRO; an exception it does not list escalates, as
            Akka's) or a callable. Default: restart on every exception.
        backoff: optional [``Backoff``][actors.Backoff] between restarts.
        log_failures: how the children's failures are logged (Akka's
            ``loggingEnabled``): True (as [``FailureLogging``][actors.FailureLogging]
            ``()``), False (not at all: a routine, resumed failure need not
            fill the logs), a [``FailureLogging``][actors.FailureLogging] (level,
            traceback), or None (the default: as the system's
            ``log_failures`` says).

    Raises:
        ValueError: ``max_restarts`` < 0 or ``within`` <= 0 (or NaN).
        TypeError: ``max_restarts`` is not an int (a bool is not), ``within``
            is not a number of seconds, ``decider`` is neither a mapping nor
            callable, ``backoff`` is neither None nor a
            [``Backoff``][actors.Backoff], or ``log_failures`` is neither None,
            a bool nor a FailureLogging.
    """

    max_restarts: int = 3
    within: float = 5.0
    decider: Mapping[type[BaseException], Directive] | Decider = field(
        default=_always_restart
    )
    backoff: Backoff | None = None
    log_failures: bool | FailureLogging | None = None

    #: Which siblings a restart takes along; set by the subclasses.
    scope: str = field(default="one", init=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_restarts, bool) or not isinstance(
            self.max_restarts, int
        ):
            raise TypeError(
                f"max_restarts must be an integer, not {self.max_restarts!r}"
            )
        if self.max_restarts < 0:
            raise ValueError(
                f"max_restarts must be an integer >= 0, got {self.max_restarts!r}"
            )
        check_seconds_type("within", self.within)
        if not self.within > 0:
            raise ValueError(f"within must be > 0 seconds, got {self.within!r}")
        if self.backoff is not None and not isinstance(self.backoff, Backoff):
            raise TypeError(
                f"backoff must be a Backoff or None, not {self.backoff!r} "
                "(e.g. Backoff(min_delay=0.1, max_delay=10.0))"
            )
        check_log_failures(self.log_failures, inherit=True)
        decider = self.decider
        if isinstance(decider, Mapping):
            for key, value in decider.items():
                if not (isinstance(key, type) and issubclass(key, BaseException)):
                    raise TypeError(
                        f"decider keys must be exception classes, not {key!r}"
                    )
                if not isinstance(value, Directive):
                    raise TypeError(
                        f"decider[{key.__name__}] must be a Directive, not {value!r}"
                    )
        elif not callable(decider):
            raise TypeError("decider must be a mapping of exception types or callable")

    def decide(self, exc: BaseException) -> Directive:
        """The directive for a child's exception."""
        decider = self.decider
        if isinstance(decider, Mapping):
            for cls in type(exc).__mro__:
                directive = decider.get(cls)
                if directive is not None:
                    return directive
            return Directive.ESCALATE
        directive = decider(exc)
        if not isinstance(directive, Directive):
            raise TypeError(f"decider returned {directive!r}, not a Directive")
        return directive


@dataclass(frozen=True)
class OneForOne(SupervisorStrategy):
    """Restart only the failed child (Erlang's one_for_one)."""

    scope: str = field(default="one", init=False)


@dataclass(frozen=True)
class OneForAll(SupervisorStrategy):
    """Restart all children when one fails (Erlang's one_for_all): all are
    stopped in reverse start order, then started again in start order."""

    scope: str = field(default="all", init=False)


@dataclass(frozen=True)
class RestForOne(SupervisorStrategy):
    """Restart the failed child and the siblings started after it (Erlang's
    rest_for_one): stopped in reverse start order, restarted in start order."""

    scope: str = field(default="rest", init=False)


class RestartIntensity:
    """A supervisor's recent restarts, to enforce ``max_restarts`` in ``within``."""

    __slots__ = ("_times",)

    def __init__(self) -> None:
        self._times: deque[float] = deque()

    def allow(self, strategy: SupervisorStrategy, now: float) -> bool:
        """Record a restart at ``now`` (seconds) unless it exceeds the intensity."""
        times = self._times
        horizon = now - strategy.within
        while times and times[0] <= horizon:
            times.popleft()
        if len(times) >= strategy.max_restarts:
            return False
        times.append(now)
        return True

    def recent(self) -> int:
        """Restarts inside the last window recorded."""
        return len(self._times)
