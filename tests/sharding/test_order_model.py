"""A hypothesis model of sharding's delivery: random interleavings of tells,
passivation (time passing), a second node joining (rebalance) and leaving
(hand-off) never lose, duplicate or reorder a sender's messages to an
entity."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from actors import ActorSystem
from actors.sharding import Entity, MemoryPlacementStore, Sharding
from actors.testing import ManualClock

from ._entities import Log, recorders

pytestmark = pytest.mark.anyio

KEYS = 6

steps = st.lists(
    st.one_of(
        st.tuples(st.just("tell"), st.integers(0, KEYS - 1), st.integers(1, 5)),
        st.tuples(st.just("advance"), st.sampled_from([0.0, 2.5, 12.0]), st.just(0)),
        st.tuples(st.just("join"), st.just(0), st.just(0)),
        st.tuples(st.just("leave"), st.just(0), st.just(0)),
        st.tuples(st.just("yield"), st.just(0), st.just(0)),
    ),
    max_size=30,
)


@settings(
    max_examples=25,
    deadline=None,
    phases=[phase for phase in Phase if phase != Phase.explain],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(program=steps)
async def test_random_passivations_joins_and_leaves_keep_every_senders_order(
    program: list[tuple[str, Any, int]],
) -> None:
    clock = ManualClock()
    store = MemoryPlacementStore(10, clock=clock)
    log = Log()
    entity = Entity("t", recorders(log), shards=4, passivate_after=10)
    sent: dict[str, list[int]] = {str(k): [] for k in range(KEYS)}
    counter = 0
    async with (
        ActorSystem(clock=clock) as system,
        Sharding(system, [entity], store=store, node="a") as a,
    ):
        b: Sharding | None = None
        joins = 0
        for op, arg, times in program:
            if op == "tell":
                ref = a.entity_ref("t", str(arg))
                for _ in range(times):
                    counter += 1
                    ref.tell(counter)
                    sent[str(arg)].append(counter)
            elif op == "advance":
                await clock.advance(arg)
            elif op == "join" and b is None:
                joins += 1
                b = Sharding(system, [entity], store=store.connect(), node=f"b{joins}")
                await b.__aenter__()
            elif op == "leave" and b is not None:
                await b.leave()
                b = None
            elif op == "yield":
                await anyio.lowlevel.checkpoint()
        for key in sent:
            await a.entity_ref("t", key).ask("get", timeout=10)
        if b is not None:
            await b.leave()
        assert a.statistics().dropped == 0
    for key, messages in sent.items():
        assert log.handled.get(key, []) == messages, key
