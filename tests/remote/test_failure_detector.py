"""The phi accrual failure detector, driven by synthetic heartbeat times (pure,
deterministic: no sleeps, no clock)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.remote._failure_detector import PhiAccrualFailureDetector, phi


def steady(detector: PhiAccrualFailureDetector, beats: int, every: float) -> float:
    """Feed ``beats`` heartbeats ``every`` seconds apart from 0; the last time."""
    now = 0.0
    for i in range(beats):
        now = i * every
        detector.heartbeat(now)
    return now


def down_after(detector: PhiAccrualFailureDetector, last: float) -> float:
    """Seconds after ``last`` at which the detector first says down (10 ms steps)."""
    step = 0
    while detector.is_available(last + step * 0.01):
        step += 1
    return step * 0.01


def test_phi_is_zero_before_the_first_heartbeat() -> None:
    detector = PhiAccrualFailureDetector()
    assert detector.phi(1000.0) == 0.0
    assert detector.is_available(1000.0)
    assert detector.last_heartbeat is None


def test_phi_grows_with_silence() -> None:
    detector = PhiAccrualFailureDetector()
    last = steady(detector, 20, 1.0)
    levels = [detector.phi(last + t) for t in (0.5, 1.0, 3.0, 5.0, 5.5, 6.0)]
    assert levels == sorted(levels) and levels[0] < 0.01 and levels[-1] > 10


def test_steady_heartbeats_then_silence_is_down_in_5_to_6_seconds_by_default() -> None:
    # The documented bound: 1 s heartbeats, threshold 10, acceptable pause 4 s.
    detector = PhiAccrualFailureDetector()
    last = steady(detector, 300, 1.0)
    assert 5.0 < down_after(detector, last) < 6.0


def test_a_node_heard_once_only_is_down_within_7_seconds() -> None:
    detector = PhiAccrualFailureDetector()
    detector.heartbeat(0.0)
    assert 5.0 < down_after(detector, 0.0) < 7.0


def test_jittery_heartbeats_widen_the_margin() -> None:
    rng = random.Random(7)
    calm, jittery = PhiAccrualFailureDetector(), PhiAccrualFailureDetector()
    now_calm = steady(calm, 200, 1.0)
    now = 0.0
    for _ in range(200):
        now += rng.uniform(0.5, 1.5)
        jittery.heartbeat(now)
    assert jittery.std_deviation > calm.std_deviation
    assert down_after(jittery, now) > down_after(calm, now_calm)


def test_the_acceptable_pause_moves_the_bound() -> None:
    short = PhiAccrualFailureDetector(acceptable_heartbeat_pause=0.0)
    long = PhiAccrualFailureDetector(acceptable_heartbeat_pause=10.0)
    assert down_after(short, steady(short, 50, 1.0)) < 2.0
    assert 10.0 < down_after(long, steady(long, 50, 1.0)) < 12.0


def test_the_interval_after_a_long_pause_is_not_learnt() -> None:
    detector = PhiAccrualFailureDetector()
    last = steady(detector, 50, 1.0)
    mean = detector.mean
    detector.heartbeat(last + 60.0)  # back after a minute: down meanwhile
    assert detector.mean == mean
    assert detector.last_heartbeat == last + 60.0
    assert detector.is_available(last + 60.5)


def test_a_heartbeat_older_than_the_last_is_ignored() -> None:
    detector = PhiAccrualFailureDetector()
    detector.heartbeat(10.0)
    detector.heartbeat(9.0)
    assert detector.last_heartbeat == 10.0


def test_the_history_keeps_at_most_max_sample_size_intervals() -> None:
    detector = PhiAccrualFailureDetector(max_sample_size=10)
    steady(detector, 100, 2.0)
    assert detector.mean == pytest.approx(2.0)
    assert detector.std_deviation == pytest.approx(0.0, abs=1e-6)


def test_the_first_estimate_seeds_the_history() -> None:
    detector = PhiAccrualFailureDetector(first_heartbeat_estimate=2.0)
    assert detector.mean == pytest.approx(2.0)
    assert detector.std_deviation == pytest.approx(0.5)


@given(
    st.floats(-1e12, 1e12),
    st.floats(1e-3, 1e6),
    st.floats(1e-6, 1e6),
)
def test_phi_never_overflows_and_is_never_negative(
    elapsed: float, mean: float, deviation: float
) -> None:
    level = phi(elapsed, mean, deviation)
    assert level >= 0.0 and not math.isnan(level)


def test_phi_matches_akkas_formula_where_that_does_not_overflow() -> None:
    for elapsed in (0.5, 1.0, 1.2, 2.0):
        y = (elapsed - 1.0) / 0.2
        e = math.exp(-y * (1.5976 + 0.070566 * y * y))
        expected = (
            -math.log10(e / (1.0 + e))
            if elapsed > 1.0
            else -math.log10(1.0 - 1.0 / (1.0 + e))
        )
        assert phi(elapsed, 1.0, 0.2) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("threshold", 0, ValueError),
        ("threshold", "8", TypeError),
        ("max_sample_size", 0, ValueError),
        ("max_sample_size", 2.0, TypeError),
        ("min_std_deviation", 0.0, ValueError),
        ("acceptable_heartbeat_pause", -1.0, ValueError),
        ("acceptable_heartbeat_pause", True, TypeError),
        ("first_heartbeat_estimate", math.nan, ValueError),
    ],
)
def test_bad_settings_are_refused_naming_them(
    name: str, value: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=name):
        PhiAccrualFailureDetector(**{name: value})  # type: ignore[arg-type]
