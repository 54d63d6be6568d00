"""The campaign's options: ``--long`` (or ``CAMPAIGN_LONG=1``) for long runs.

``pytest tests/campaign --long`` runs many seeds per backend (hundreds of
thousands of operations; millions with ``CAMPAIGN_SEEDS``/``CAMPAIGN_OPS``);
without it, a few seeds per backend (a few seconds). The option is registered
here, so it is known when pytest is given ``tests/campaign``; from the root
(``pytest --long``) use the environment variable instead. For the longest
runs with figures, prefer ``python -m tests.campaign``.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the fault campaign's long mode (many seeds per backend)",
    )


@pytest.fixture
def long_mode(request: pytest.FixtureRequest) -> bool:
    """Whether the long campaign was asked for (``--long`` or ``CAMPAIGN_LONG``)."""
    option = request.config.getoption("--long", default=False)
    return bool(option) or os.environ.get("CAMPAIGN_LONG", "") not in ("", "0")
