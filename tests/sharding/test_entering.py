"""A Sharding whose entry fails undoes what it spawned: ``async with`` never
reaches ``__aexit__`` then, so nothing else would stop it."""

from __future__ import annotations

import pytest

from actors import Actor, ActorSystem
from actors.sharding import Entity, MemoryPlacementStore, Sharding

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio


class _Squatter(Actor[object]):
    def receive(self, message: object) -> None:
        pass


async def test_a_sharding_whose_entry_fails_stops_what_it_spawned() -> None:
    async with ActorSystem() as system:
        # The second type's region name is taken: entering fails after the
        # membership actor and the first region were spawned.
        squatter = system.spawn(_Squatter, name="sharding-second-a")
        types = [Entity("first", recorders(Log())), Entity("second", recorders(Log()))]
        sharding = Sharding(system, types, store=MemoryPlacementStore(10), node="a")
        with pytest.raises(Exception, match="sharding-second-a"):
            async with sharding:
                pytest.fail("entered a sharding whose region could not start")
        # The same Sharding enters once the name is free: the membership
        # actor and the first region were stopped (and joined), their names
        # free again.
        squatter.stop()
        await squatter.join()
        async with sharding:
            assert sharding.hosts("first") and sharding.hosts("second")
