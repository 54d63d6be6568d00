"""Helpers for scale-out: nodes (actor systems with a node agent) in this
process, on the kit's ``nats_server`` (a real ``nats-server``), with the
kit's fast failure detection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from actors import ActorSystem
from actors.nats._protocol import new_nuid
from actors.node import host
from actors.remote import Remote
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL, fast_detector

from . import _workers

#: The module the test nodes host (by the name pytest imported it under).
WORKERS = _workers.__name__
@pytest.fixture
def system_name() -> str:
    """A system name no other test uses (so tests share the server)."""
    return "s" + new_nuid(10)


def equal(got: object, wanted: object) -> None:
    """An assertion for ``await_assert``: ``got == wanted``."""
    assert got == wanted, got


def remote(url: str, system: str, node: str, **options: Any) -> Remote:
    """A ``Remote`` with the kit's fast failure detection (unless ``options``
    choose another)."""
    options.setdefault("heartbeat_interval", FAST_HEARTBEAT_INTERVAL)
    options.setdefault("failure_detector", fast_detector)
    return Remote(url, system=system, node=node, **options)


@asynccontextmanager
async def node(
    url: str,
    system: str,
    name: str,
    modules: tuple[str, ...] = (WORKERS,),
    shutdown_timeout: float | None = None,
) -> AsyncIterator[ActorSystem]:
    """A node in this process hosting ``modules`` (with a node agent)."""
    async with ActorSystem(
        remote=remote(url, system, name), shutdown_timeout=shutdown_timeout
    ) as actors:
        host(actors, modules)
        yield actors
