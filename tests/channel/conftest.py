"""Fixtures for the channel tests."""

from __future__ import annotations

from typing import Any, Protocol

import anyio
import pytest

import actors.channel


class StreamFactory(Protocol):
    """``create_memory_object_stream`` of one implementation."""

    def __call__(self, max_buffer_size: float = 0) -> tuple[Any, Any]: ...


@pytest.fixture(
    params=[
        pytest.param(actors.channel.create_memory_object_stream, id="actors"),
        pytest.param(anyio.create_memory_object_stream, id="anyio-reference"),
    ]
)
def create(request: pytest.FixtureRequest) -> StreamFactory:
    """Ours, and anyio's own streams as a reference: a contract test that anyio's
    streams fail is testing something anyio does not promise."""
    factory: StreamFactory = request.param
    return factory
