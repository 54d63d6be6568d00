"""Zero cost when off: a system without telemetry runs the same code whether
or not OpenTelemetry can be imported, and never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from actors import Actor, ActorRef, ActorSystem, Telemetry

SCRIPT = Path(__file__).with_name("_count_calls.py")


def _count(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def counts() -> dict[str, dict[str, Any]]:
    return {mode: _count(mode) for mode in ("off", "blocked", "on")}


def test_tell_to_handle_makes_the_same_calls_with_opentelemetry_unimportable(
    counts: dict[str, dict[str, Any]],
) -> None:
    # Every Python call and every C call, batch by batch, are the same: the
    # path with telemetry off does nothing that depends on OpenTelemetry.
    assert counts["off"]["batches"] == counts["blocked"]["batches"]
    assert counts["off"]["per_message"]["call"] < 5


def test_a_system_without_telemetry_never_imports_opentelemetry(
    counts: dict[str, dict[str, Any]],
) -> None:
    assert not counts["off"]["opentelemetry_imported"]
    assert not counts["blocked"]["opentelemetry_imported"]
    assert counts["off"]["telemetry_code_ran"] == []
    assert counts["on"]["telemetry_code_ran"] != []  # the check can see it


def test_telemetry_on_costs_calls_per_message(
    counts: dict[str, dict[str, Any]],
) -> None:
    # The gate above would pass vacuously if the count missed the handler:
    # turning telemetry on must show up in it.
    off, on = counts["off"]["per_message"], counts["on"]["per_message"]
    assert on["call"] > off["call"] + 10


def test_telemetry_needs_opentelemetry() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "import actors\n"
        "try:\n"
        "    actors.Telemetry()\n"
        "except ImportError:\n"
        "    print('ImportError')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "ImportError", done.stderr


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


@pytest.mark.anyio
async def test_refs_are_plain_without_telemetry_and_traced_with_it() -> None:
    async with ActorSystem() as system:
        plain = system.spawn(Echo)
        assert type(plain) is ActorRef
        assert await plain.ask(1) == 1
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    telemetry = Telemetry(
        tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
    )
    async with ActorSystem(telemetry=telemetry) as system:
        traced = system.spawn(Echo)
        assert type(traced) is not ActorRef and isinstance(traced, ActorRef)
        assert await traced.ask(2) == 2
        assert traced == traced._cell.ref and hash(traced) == id(traced._cell)
