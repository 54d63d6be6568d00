"""Shared pytest configuration: every async test runs on asyncio, uvloop and trio."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# pytester: the test kit's plugin is tested by running pytest on small files
# (tests/testing/test_plugin.py).
pytest_plugins = ["pytester"]

# Hypothesis profiles. The one named by HYPOTHESIS_PROFILE is loaded; without
# it, "ci": the same examples on every machine (derandomized, no example
# database), so a property test cannot pass in CI and fail locally, or the
# other way round. No deadline: the machines are small and noisy.
# HYPOTHESIS_PROFILE=dev explores new random examples on each run (and replays
# failures it found from its database): for hunting bugs, not for a verdict.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _uvloop_factory() -> Any:
    import uvloop

    return uvloop.new_event_loop


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"loop_factory": _uvloop_factory()}), id="uvloop"),
        pytest.param(("trio", {}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    """The three event loops every async test runs on."""
    return request.param
