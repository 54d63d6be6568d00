"""Heartbeats between nodes that talk to each other, and NodeDown.

A node monitors the peers it depends on (it watches an actor there, has asks
in flight to it, or NATS said nobody listens on it and it has not answered
since): ``depend`` and ``undepend`` count those reasons per peer, and the
first starts monitoring it, the last releases it. Once per interval it sends
each monitored peer a
heartbeat, the peer answers with an ack, and each ack feeds that peer's phi
accrual failure detector. A peer whose phi reaches the threshold is declared
down once: it leaves the monitor and ``on_down`` gets a
[``NodeDown``][actors.remote.NodeDown]. A peer that never answers is declared
down as if it had answered when it started being monitored. A peer no longer
depended on is *released*: it stays monitored, detector and all, for ``linger``
seconds (from the next round), so a caller that asks the same peer again and
again keeps one detector (a peer that stopped answering is still declared
down) instead of a fresh one per ask. A restarted peer is another
incarnation, so another peer here: nothing is "quarantined".

The checks are a pure function of the time (``HeartbeatMonitor.tick``),
so they are tested with synthetic times; ``HeartbeatMonitor.run`` calls
it once per interval.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import anyio

from ._errors import NodeDown
from ._failure_detector import PhiAccrualFailureDetector
from ._node import NodeAddress

__all__ = ["DEFAULT_HEARTBEAT_INTERVAL", "HeartbeatMonitor"]

logger = logging.getLogger("actors.remote")

#: Seconds between two heartbeats to a monitored peer.
DEFAULT_HEARTBEAT_INTERVAL = 1.0
#: Heartbeat intervals a released peer stays monitored by default.
LINGER_INTERVALS = 5
#: ``_Peer.released`` of a peer released without a time: its linger starts
#: at the next round (``tick``), so a release costs no clock reading (asks
#: release their peer once each). It lingers up to one interval longer.
_AT_NEXT_ROUND = math.inf


class _Peer:
    __slots__ = ("answered", "detector", "released")

    def __init__(self, detector: PhiAccrualFailureDetector) -> None:
        self.detector = detector
        self.answered = False  # no ack yet: the detector runs from the start
        #: When it was released (None: depended on).
        self.released: float | None = None


class HeartbeatMonitor:
    """Sends heartbeats to monitored peers and declares silent ones down.

    Args:
        send: ``send(peer, seq)`` sends a heartbeat envelope to ``peer`` (sync,
            never waits; an exception it raises is logged and the heartbeat
            is skipped).
        on_down: called once with a [``NodeDown``][actors.remote.NodeDown] for
            each peer declared down (sync; an exception it raises is logged).
        interval: seconds between two rounds of heartbeats and checks (> 0).
        detector: makes the failure detector of a newly monitored peer.
        clock: the time in seconds (default: ``anyio.current_time``); used
            where a method is given no ``now``.
        linger: seconds a released peer stays monitored (default:
            ``LINGER_INTERVALS`` intervals).

    Raises:
        TypeError / ValueError: a bad argument, naming it.
    """

    def __init__(
        self,
        send: Callable[[NodeAddress, int], object],
        on_down: Callable[[NodeDown], object],
        *,
        interval: float = DEFAULT_HEARTBEAT_INTERVAL,
        detector: Callable[[], PhiAccrualFailureDetector] = PhiAccrualFailureDetector,
        clock: Callable[[], float] | None = None,
        linger: float | None = None,
    ) -> None:
        if not callable(send):
            raise TypeError("send must be callable")
        if not callable(on_down):
            raise TypeError("on_down must be callable")
        if isinstance(interval, bool) or not isinstance(interval, int | float):
            raise TypeError(
                f"interval must be a number of seconds, not {type(interval).__name__}"
            )
        if not 0 < interval < float("inf"):
            raise ValueError(f"interval must be a finite number > 0, not {interval!r}")
        self.interval = float(interval)
        if linger is None:
            linger = LINGER_INTERVALS * self.interval
        elif isinstance(linger, bool) or not isinstance(linger, int | float):
            raise TypeError(
                f"linger must be a number of seconds, not {type(linger).__name__}"
            )
        elif not 0 <= linger < float("inf"):
            raise ValueError(f"linger must be a finite number >= 0, not {linger!r}")
        self.linger = float(linger)
        self._send = send
        self._on_down = on_down
        self._detector = detector
        self._clock = clock or anyio.current_time
        self._peers: dict[NodeAddress, _Peer] = {}
        #: Why each peer is depended on: asks in flight, watches, suspicion.
        self._dependents: dict[NodeAddress, int] = {}
        self._seq = 0

    @property
    def peers(self) -> list[NodeAddress]:
        """The peers monitored now."""
        return list(self._peers)

    def is_monitoring(self, peer: NodeAddress) -> bool:
        """Whether ``peer`` is monitored (and not declared down)."""
        return peer in self._peers

    @property
    def depended(self) -> dict[NodeAddress, int]:
        """The peers depended on now, with how many reasons each (a copy;
        see ``depend``)."""
        return dict(self._dependents)

    def depend(self, peer: NodeAddress) -> None:
        """One more reason to watch ``peer`` (an ask in flight, a watch, a
        suspicion): the first starts monitoring it."""
        count = self._dependents.get(peer, 0)
        self._dependents[peer] = count + 1
        if not count:
            state = self._peers.get(peer)
            if state is None:
                self.monitor(peer)
            else:  # monitor() inlined for a lingering peer: a call saved per ask
                state.released = None

    def undepend(self, peer: NodeAddress) -> None:
        """One reason less (as many calls as ``depend``): after the last,
        ``peer`` is released (monitored a while longer, so the next ask keeps
        its detector)."""
        count = self._dependents.pop(peer, 1) - 1
        if count:
            self._dependents[peer] = count
        else:
            # release() inlined, its linger from the next round: no call.
            state = self._peers.get(peer)
            if state is not None:
                state.released = _AT_NEXT_ROUND

    def monitor(self, peer: NodeAddress, now: float | None = None) -> None:
        """Start monitoring ``peer``: it gets a heartbeat at the next round,
        and its detector starts at ``now``. A peer monitored already (or
        released and still lingering) keeps its detector."""
        state = self._peers.get(peer)
        if state is None:
            state = _Peer(self._detector())
            state.detector.heartbeat(self._clock() if now is None else now)
            self._peers[peer] = state
        else:
            state.released = None

    def release(self, peer: NodeAddress, now: float | None = None) -> None:
        """``peer`` is no longer depended on: it stays monitored for
        ``linger`` seconds from ``now`` (None: from the next round), then is
        dropped (unless monitored again meanwhile). Nothing if it is not
        monitored."""
        state = self._peers.get(peer)
        if state is not None:
            state.released = _AT_NEXT_ROUND if now is None else now

    def unmonitor(self, peer: NodeAddress) -> None:
        """Stop monitoring ``peer`` (nothing if it is not monitored)."""
        self._peers.pop(peer, None)

    def acked(self, peer: NodeAddress, now: float | None = None) -> None:
        """A heartbeat ack from ``peer`` arrived (ignored if it is not
        monitored)."""
        state = self._peers.get(peer)
        if state is None:
            return
        when = self._clock() if now is None else now
        if not state.answered:
            # The start was a stand-in: measure intervals from the first ack.
            state.answered = True
            state.detector = self._detector()
        state.detector.heartbeat(when)

    def phi(self, peer: NodeAddress, now: float | None = None) -> float:
        """The suspicion level of ``peer`` now (0.0 if it is not monitored)."""
        state = self._peers.get(peer)
        if state is None:
            return 0.0
        return state.detector.phi(self._clock() if now is None else now)

    def tick(self, now: float | None = None) -> list[NodeDown]:
        """One round: drop the released peers whose linger is over, declare
        down the peers whose phi reached the threshold, send a heartbeat to
        each of the others.

        Returns:
            The peers declared down in this round (``on_down`` was called for
            each).
        """
        when = self._clock() if now is None else now
        down: list[NodeDown] = []
        linger = self.linger
        for peer, state in list(self._peers.items()):
            released = state.released
            if released is not None:
                if released == _AT_NEXT_ROUND:
                    state.released = when  # its linger starts now
                elif when - released >= linger:
                    del self._peers[peer]
                    continue
            detector = state.detector
            level = detector.phi(when)
            if level >= detector.threshold:
                del self._peers[peer]
                down.append(NodeDown(peer, level))
                continue
            self._seq += 1
            try:
                self._send(peer, self._seq)
            except Exception:
                logger.exception("sending a heartbeat to %s failed", peer)
        for event in down:
            try:
                self._on_down(event)
            except Exception:
                logger.exception("on_down raised for %s", event.node)
        return down

    async def run(self) -> None:
        """Call ``tick`` once per ``interval`` until cancelled."""
        while True:
            self.tick()
            await anyio.sleep(self.interval)
