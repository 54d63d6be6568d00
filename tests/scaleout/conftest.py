"""Fixtures for scale-out: a real ``nats-server`` on a free loopback port,
and nodes (actor systems with a node agent) in this process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.node import host
from actors.remote import Remote
from actors.remote._failure_detector import PhiAccrualFailureDetector

from . import _workers

#: The module the test nodes host (by the name pytest imported it under).
WORKERS = _workers.__name__
#: Heartbeats every 50 ms: a silent node is down about half a second later.
HEARTBEAT = 0.05


def fast_detector() -> PhiAccrualFailureDetector:
    return PhiAccrualFailureDetector(
        first_heartbeat_estimate=HEARTBEAT,
        acceptable_heartbeat_pause=0.3,
        min_std_deviation=0.05,
    )


@pytest.fixture(scope="session")
def nats_server() -> Iterator[NatsServer]:
    with NatsServer() as server:
        yield server


@pytest.fixture
def system_name() -> str:
    """A system name no other test uses (so tests share the server)."""
    return "s" + new_nuid(10)


def remote(url: str, system: str, node: str, **options: Any) -> Remote:
    return Remote(
        url,
        system=system,
        node=node,
        heartbeat_interval=HEARTBEAT,
        failure_detector=fast_detector,
        **options,
    )


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
