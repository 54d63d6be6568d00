"""Bad input from the network: counted by cause, from a fixed set, and
logged at a bounded rate.

Nothing here is keyed by a value a sender chooses (its claimed address, a
reply subject, an envelope's type): the counters' keys are the causes
below, so a flood of garbage grows one integer, and the log gets the first
occurrence of each cause and then at most one line per cause every
``LOG_INTERVAL`` seconds, with how many came meanwhile.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

__all__ = ["CAUSES", "LOG_INTERVAL", "BadInput"]

logger = logging.getLogger("actors.remote")

#: Every cause bad input is counted under.
CAUSES: Final = frozenset(
    {
        # A frame as a whole, before any envelope is handled:
        "oversize frame",
        "malformed frame",
        "unknown version",
        "not authenticated",  # no tag, or a wrong one (the cluster secret)
        "unnumbered frame",  # a node's frame without a frame number
        "replayed frame",  # a number at or below the last one accepted
        "from a gone node",  # an incarnation declared down
        "peer table full",  # a new peer beyond ``max_peers``
        "anonymous frame refused",  # with a secret: only lookups
        # An envelope:
        "unexpected envelope",  # a kind that only answers a request
        "envelope not handled",  # its handler raised
        "undecodable message",
        "undecodable death reason",
        "answer from another node",
        "ack beyond the frames sent",
        "stop refused",  # a stop of a guardian, /system or the node agent
        "watch table full",  # beyond MAX_REMOTE_WATCHES
        "answer not sent",
        "bad lookup answer",
        "bad share",  # a share advertised outside 1..MAX_SHARE
    }
)

#: Seconds between two log lines of one cause (after its first).
LOG_INTERVAL: Final = 60.0


class BadInput:
    """The bad-input counters of one node (see the module doc).

    Args:
        clock: seconds, for the log's rate (default: ``time.monotonic``).
    """

    __slots__ = ("_clock", "_logged", "_since", "counts")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        #: Bad input counted so far, by cause (only causes from ``CAUSES``).
        self.counts: dict[str, int] = {}
        #: When each cause was last logged, and how many came since.
        self._logged: dict[str, float] = {}
        self._since: dict[str, int] = {}

    def __call__(self, peer: object, cause: str, error: object = None) -> None:
        """Count one ``cause`` (from ``CAUSES``); ``peer`` (the claimed sender,
        for the log only) and ``error`` describe it.

        Raises:
            ValueError: ``cause`` is not one of ``CAUSES`` (a bug here).
        """
        if cause not in CAUSES:
            raise ValueError(f"unknown bad-input cause {cause!r}")
        counts = self.counts
        counts[cause] = counts.get(cause, 0) + 1
        now = self._clock()
        last = self._logged.get(cause)
        if last is not None and now - last < LOG_INTERVAL:
            self._since[cause] = self._since.get(cause, 0) + 1
            return
        self._logged[cause] = now
        more = self._since.pop(cause, 0)
        logger.warning(
            "bad input (%s) from %.100s, dropped: %.300s%s",
            cause,
            peer,
            error,
            "" if last is None else f" ({more} more since the last such line)",
        )
