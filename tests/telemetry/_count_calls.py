"""Counts Python function calls (``sys.setprofile``) for tell -> handle.

Run as a script: ``python _count_calls.py MODE``, MODE one of

* ``off``: telemetry off, OpenTelemetry importable;
* ``blocked``: telemetry off, OpenTelemetry made unimportable before
  ``actors`` is imported (``sys.modules["opentelemetry"] = None``);
* ``on``: telemetry on (no-op providers: the cost of our own instrumentation
  and the API's calls, not of an SDK).

Prints one JSON object: per-batch call counts for two batch sizes, the calls
per message (their difference over the difference in messages), and whether
OpenTelemetry was imported. asyncio only: its scheduling is deterministic.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from types import FrameType
from typing import Any

MODE = sys.argv[1]
if MODE == "blocked":
    sys.modules["opentelemetry"] = None  # type: ignore[assignment]

import anyio  # noqa: E402

from actors import Actor, ActorSystem  # noqa: E402

SMALL, LARGE = 200, 400


class Sink(Actor):
    def __init__(self) -> None:
        self.count = 0

    def receive(self, message: Any) -> Any:
        self.count += 1
        return self.count


#: Source files of the Python functions called while counting.
FILES: set[str] = set()


def _batch(counts: Counter[str]) -> Any:
    def profile(frame: FrameType, event: str, arg: object) -> None:
        counts[event] += 1
        FILES.add(frame.f_code.co_filename)

    return profile


async def main() -> dict[str, Any]:
    telemetry = None
    if MODE == "on":
        from opentelemetry.metrics import NoOpMeterProvider
        from opentelemetry.trace import NoOpTracerProvider

        from actors import Telemetry

        telemetry = Telemetry(
            tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
        )
    result: dict[str, Any] = {}
    async with ActorSystem(telemetry=telemetry) as system:
        ref = system.spawn(Sink)
        for n in (SMALL, SMALL, LARGE):  # the first batch warms up
            await ref.ask("sync")
            counts: Counter[str] = Counter()
            sys.setprofile(_batch(counts))
            for i in range(n):
                ref.tell(i)
            await ref.ask("sync")
            sys.setprofile(None)
            result[str(n)] = {"call": counts["call"], "c_call": counts["c_call"]}
    per = {
        event: (result[str(LARGE)][event] - result[str(SMALL)][event]) / (LARGE - SMALL)
        for event in ("call", "c_call")
    }
    return {
        "batches": result,
        "per_message": per,
        "telemetry_code_ran": sorted(
            name for name in FILES if "opentelemetry" in name or "_traced" in name
        ),
        "opentelemetry_imported": any(
            name == "opentelemetry" or name.startswith("opentelemetry.")
            for name, module in sys.modules.items()
            if module is not None
        ),
    }


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, backend="asyncio")))
