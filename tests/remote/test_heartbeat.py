"""The heartbeat monitor: heartbeats to monitored peers each round, NodeDown
once for a peer that stops answering, driven by synthetic times; and its task
on the three backends."""

from __future__ import annotations

import anyio
import pytest

from actors.remote._errors import NodeDown
from actors.remote._failure_detector import PhiAccrualFailureDetector
from actors.remote._heartbeat import HeartbeatMonitor
from actors.remote._node import NodeAddress

BETA = NodeAddress("beta", "fedcba9876543210")
GAMMA = NodeAddress("gamma", "00000000000000ff")


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[NodeAddress, int]] = []
        self.down: list[NodeDown] = []

    def monitor(self, **options: object) -> HeartbeatMonitor:
        return HeartbeatMonitor(
            lambda peer, seq: self.sent.append((peer, seq)),
            self.down.append,
            clock=lambda: pytest.fail("the clock is not used with explicit times"),
            **options,  # type: ignore[arg-type]
        )


def test_each_round_sends_one_heartbeat_per_monitored_peer() -> None:
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=0.0)
    monitor.monitor(GAMMA, now=0.0)
    monitor.monitor(BETA, now=0.0)  # already monitored: nothing changes
    monitor.tick(now=0.0)
    monitor.tick(now=1.0)
    assert [peer for peer, _ in rec.sent] == [BETA, GAMMA, BETA, GAMMA]
    assert [seq for _, seq in rec.sent] == [1, 2, 3, 4]
    assert set(monitor.peers) == {BETA, GAMMA}


def test_a_peer_that_keeps_answering_is_never_declared_down() -> None:
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=0.0)
    for second in range(600):
        monitor.tick(now=float(second))
        monitor.acked(BETA, now=second + 0.01)
    assert rec.down == [] and monitor.is_monitoring(BETA)


def test_a_peer_that_stops_answering_is_declared_down_once_within_the_bound() -> None:
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=0.0)
    for second in range(30):
        monitor.tick(now=float(second))
        monitor.acked(BETA, now=second + 0.01)
    # Silent from 29.01 on: down at the first round with phi >= 10.
    second = 30
    while not rec.down:
        monitor.tick(now=float(second))
        second += 1
    (event,) = rec.down
    assert event.node == BETA and event.phi >= 10
    assert 5.0 < (second - 1) - 29.01 <= 6.6  # the documented bound
    assert not monitor.is_monitoring(BETA)
    monitor.tick(now=float(second + 10))
    monitor.acked(BETA, now=float(second + 10))  # a late ack: ignored
    assert len(rec.down) == 1
    assert "beta" in str(event)


def test_a_peer_that_never_answers_is_declared_down_too() -> None:
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=100.0)
    for second in range(100, 110):
        monitor.tick(now=float(second))
    assert [event.node for event in rec.down] == [BETA]


def test_the_first_ack_restarts_the_measurement() -> None:
    # The start of monitoring stands in for a first heartbeat: the time to the
    # first ack is not taken as an interval.
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=0.0)
    monitor.acked(BETA, now=0.001)
    monitor.acked(BETA, now=1.001)
    assert monitor.phi(BETA, now=1.5) < 0.01


def test_an_unmonitored_peer_gets_no_heartbeats_and_is_never_down() -> None:
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=0.0)
    monitor.unmonitor(BETA)
    monitor.unmonitor(GAMMA)
    for second in range(20):
        monitor.tick(now=float(second))
    assert rec.sent == [] and rec.down == []
    assert monitor.phi(BETA, now=20.0) == 0.0


def test_a_failing_send_or_on_down_callback_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def send(peer: NodeAddress, seq: int) -> None:
        raise RuntimeError("outbound full")

    def on_down(event: NodeDown) -> None:
        raise RuntimeError("listener broke")

    monitor = HeartbeatMonitor(send, on_down)
    monitor.monitor(BETA, now=0.0)
    monitor.tick(now=1.0)
    assert [event.node for event in monitor.tick(now=60.0)] == [BETA]
    assert "outbound full" in caplog.text and "listener broke" in caplog.text


def test_bad_arguments_are_refused_naming_them() -> None:
    with pytest.raises(TypeError, match="send"):
        HeartbeatMonitor(None, print)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interval"):
        HeartbeatMonitor(print, print, interval=0)
    with pytest.raises(TypeError, match="interval"):
        HeartbeatMonitor(print, print, interval="1")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_monitor_task_reports_a_silent_peer_and_keeps_a_live_one() -> None:
    # Scaled-down settings on the real clock; synchronised on events only.
    down = anyio.Event()
    events: list[NodeDown] = []
    monitor: HeartbeatMonitor

    def send(peer: NodeAddress, seq: int) -> None:
        if peer == GAMMA:
            monitor.acked(peer)  # GAMMA answers at once; BETA never does

    def on_down(event: NodeDown) -> None:
        events.append(event)
        down.set()

    def detector() -> PhiAccrualFailureDetector:
        return PhiAccrualFailureDetector(
            first_heartbeat_estimate=0.01,
            acceptable_heartbeat_pause=0.5,
            min_std_deviation=0.01,
        )

    monitor = HeartbeatMonitor(send, on_down, interval=0.01, detector=detector)
    monitor.monitor(BETA)
    monitor.monitor(GAMMA)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(monitor.run)
            await down.wait()
            tg.cancel_scope.cancel()
    assert [event.node for event in events] == [BETA]


def test_a_released_peer_is_still_monitored_until_its_linger_is_over() -> None:
    rec = Recorder()
    monitor = rec.monitor(linger=3.0)
    monitor.monitor(BETA, now=0.0)
    monitor.release(BETA, now=0.5)
    monitor.tick(now=1.0)
    monitor.tick(now=3.0)
    assert monitor.is_monitoring(BETA) and len(rec.sent) == 2
    monitor.tick(now=3.5)  # 3 s after the release: dropped, no heartbeat
    assert not monitor.is_monitoring(BETA) and len(rec.sent) == 2


def test_a_peer_monitored_again_while_lingering_keeps_its_detector() -> None:
    # Sequential asks to one peer: each one depends on it, then releases it;
    # the detector is the same throughout, so a peer that stopped answering
    # is declared down although every ask monitors it afresh.
    rec = Recorder()
    monitor = rec.monitor()
    monitor.monitor(BETA, now=0.0)
    for second in range(10):
        monitor.tick(now=float(second))
        monitor.acked(BETA, now=second + 0.01)
    detector = monitor._peers[BETA].detector
    second = 10
    while not rec.down:
        monitor.monitor(BETA, now=float(second))  # an ask begins
        assert monitor._peers[BETA].detector is detector
        monitor.release(BETA, now=second + 0.5)  # and ends
        monitor.tick(now=float(second + 1))
        second += 1
        assert second < 30, "never declared down"
    assert rec.down[0].node == BETA


def test_a_bad_linger_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="linger"):
        HeartbeatMonitor(print, print, linger="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="linger"):
        HeartbeatMonitor(print, print, linger=-1.0)
