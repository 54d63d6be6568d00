"""Shared pytest configuration: every async test runs on asyncio, uvloop and
trio; the fixtures of the test kit's plugin (``actor_system``, ``probe``,
``manual_time``, ``nats_server``, ...) are everywhere."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from actors.testing.plugin import all_backends

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


@pytest.fixture(params=all_backends())
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    """The three event loops every async test runs on (the test kit's
    ``all_backends``: asyncio, uvloop, trio)."""
    return request.param
