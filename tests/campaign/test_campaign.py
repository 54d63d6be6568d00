"""The randomized fault campaign (see ``_engine.py`` and ``_ledger.py``).

Guarantee: under random tell / send / ask, cancel scopes, native cancels,
failing handlers under random strategies, stops, pools, timers and thread
entry, every message is handled once, rejected at the call, or counted as a
dead letter; nothing is handled twice; leaving the system always ends.

The green run switches off the features behind known bugs (:data:`KNOWN`);
each known class also runs on its own, marked ``xfail(strict=False)``: when its
fix lands it starts passing (XPASS), and its switch comes out of ``KNOWN``.
"""

from __future__ import annotations

import os

import pytest

from ._engine import BACKENDS, run_seed

#: Features switched off in the green campaign, each for a bug being fixed;
#: the value says what breaks and where (see test_repros.py for each). Empty:
#: every class the campaign found so far is fixed, and every feature runs.
KNOWN: dict[str, str] = {}

BACKEND_IDS = list(BACKENDS)


def _seeds(long_mode: bool) -> tuple[range, int]:
    if long_mode:
        seeds = int(os.environ.get("CAMPAIGN_SEEDS", "200"))
        ops = int(os.environ.get("CAMPAIGN_OPS", "5000"))
        return range(seeds), ops
    return range(6), 3000


#: Operations to make more frequent when a known class runs on its own.
BOOST: dict[str, dict[str, int]] = {
    "shared_queue": {"broadcast": 5},
    "thread_asks": {"thread": 20},
    "native_ask": {"native_ask": 5},
    "group_strategies": {"stop": 5},
}


def _run(
    backend: str,
    seeds: range,
    ops: int,
    features: dict[str, bool],
    timeout: float,
    boost: dict[str, int] | None = None,
) -> None:
    failures = []
    for seed in seeds:
        result = run_seed(seed, backend, ops, features, timeout, boost)
        if not result.ok:
            failures.append(result.describe())
    assert not failures, "\n".join(failures[:5])


@pytest.mark.timeout(0)
@pytest.mark.parametrize("backend", BACKEND_IDS)
def test_every_message_is_handled_once_rejected_or_a_dead_letter(
    backend: str, long_mode: bool
) -> None:
    seeds, ops = _seeds(long_mode)
    _run(backend, seeds, ops, {name: False for name in KNOWN}, timeout=30.0)


@pytest.mark.timeout(0)
@pytest.mark.parametrize("backend", BACKEND_IDS)
@pytest.mark.parametrize(
    "feature",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=False, reason=why))
        for name, why in KNOWN.items()
    ],
)
def test_a_known_bug_class_still_breaks_the_invariant(
    backend: str, feature: str, long_mode: bool
) -> None:
    # Only the one known feature on, so a failure here is that class.
    if feature in ("native_ask", "stray_cancel") and backend == "trio":
        pytest.skip("native Task.cancel() is asyncio's")
    seeds, ops = _seeds(long_mode)
    if not long_mode:
        seeds, ops = range(3), 1500
    features = {name: name == feature for name in KNOWN}
    # A hang shows within 3 s here (the runs take well under a second).
    _run(backend, seeds, ops, features, 3.0, BOOST.get(feature))
