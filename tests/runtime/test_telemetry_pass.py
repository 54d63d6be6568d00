"""The telemetry pass (tests/_telemetry_pass.py) really runs these suites traced:
in a ``[...-traced]`` variant ``ActorSystem()`` has telemetry on, elsewhere off."""

from __future__ import annotations

from typing import Any

import pytest

from actors import Actor, ActorSystem, Telemetry

pytestmark = pytest.mark.anyio


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


async def test_a_traced_variant_runs_with_telemetry_and_a_plain_one_without(
    telemetry_pass: bool,
) -> None:
    async with ActorSystem() as system:
        ref = system.spawn(Echo)
        assert await ref.ask("x") == "x"
        assert isinstance(system.telemetry, Telemetry) is telemetry_pass
        assert (type(ref).__name__ == "TracedRef") is telemetry_pass


async def test_an_explicit_telemetry_wins_over_the_pass() -> None:
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    mine = Telemetry(
        tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
    )
    async with ActorSystem(telemetry=mine) as system:
        assert system.telemetry is mine
