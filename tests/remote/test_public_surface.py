"""The remote layer's public surface: one ActorNotFound for local and
remote lookups, the plug-in interface outside the top-level namespace, the
NATS client and the embedded server public in actors.nats, refs of every
kind ActorRefs."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import actors
import actors.extension
import actors.nats
import actors.remote
import actors.testing
from actors import ActorSystem, Telemetry
from actors.testing.remote import Cluster

pytestmark = pytest.mark.anyio


def test_there_is_one_actor_not_found_for_local_and_remote_lookups() -> None:
    assert actors.remote.ActorNotFound is actors.ActorNotFound


async def test_a_failed_remote_lookup_is_caught_as_actors_actor_not_found(
    cluster: Any,
) -> None:
    nodes: Cluster
    async with cluster(2) as nodes:
        with pytest.raises(actors.ActorNotFound, match="no actor '/user/nobody'"):
            await nodes[0].remote.lookup("node-1", "/user/nobody")
        # As the local lookup raises it.
        with pytest.raises(actors.ActorNotFound):
            nodes[0].lookup("/user/nobody")


def test_the_plug_in_interface_is_not_in_the_top_level_namespace() -> None:
    for name in ("RemoteExtension", "RemoteHost", "LocalAsk"):
        assert not hasattr(actors, name), name
        assert name not in actors.__all__
        assert hasattr(actors.extension, name)


def test_telemetry_shows_no_method_that_takes_the_runtimes_cell() -> None:
    public = [
        name
        for name, value in inspect.getmembers(Telemetry)
        if not name.startswith("_") and callable(value)
    ]
    assert public == []


def test_the_nats_client_and_the_embedded_server_are_public() -> None:
    for name in ("connect", "Client", "Msg", "Subscription", "NatsError"):
        assert name in actors.nats.__all__
    assert actors.testing.NatsServer is actors.nats.NatsServer
    assert "NatsServer" in actors.nats.__all__


def test_a_system_keeps_the_remote_extension_it_was_given() -> None:
    remote = actors.remote.Remote("nats://127.0.0.1:1")
    system = ActorSystem(remote=remote)
    assert system.remote is remote
    assert ActorSystem().remote is None
