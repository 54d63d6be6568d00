"""The telemetry pass: the runtime, supervision, pools and timers suites run a
second time with telemetry on, so the traced code paths (``TracedRef``,
``TracedPoolRef``, ``traced_loop``) answer to the very same tests as the plain
ones.

How: the conftest of each of those directories imports the names below. Every
async test there (one that uses the ``anyio_backend`` fixture) gets one more
backend variant, ``[asyncio-traced]``: asyncio, with ``ActorSystem()``
defaulting to a ``Telemetry`` on OpenTelemetry's no-op providers (an explicit
``telemetry=`` argument still wins). The plain variants and their ids are
untouched.

Switch with the environment variable ``ACTORS_TELEMETRY_PASS``:

* unset or ``asyncio`` (the default): the traced variant on asyncio only;
* ``all``: traced variants on every backend (``[uvloop-traced]``,
  ``[trio-traced]`` too);
* ``0`` (or ``off``): no traced variants.

Select only the traced variants with ``-k traced``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import actors

__all__ = ["pytest_generate_tests", "telemetry_pass"]


class Traced(tuple[str, dict[str, Any]]):
    """An ``anyio_backend`` value (name, options) that also turns telemetry
    on: anyio's plugin sees the plain pair."""

    __slots__ = ()


def _mode() -> str:
    mode = os.environ.get("ACTORS_TELEMETRY_PASS", "asyncio").strip().lower()
    if mode in ("0", "off", "no", "false"):
        return "off"
    if mode in ("", "asyncio", "1", "on", "yes", "true"):
        return "asyncio"
    if mode == "all":
        return "all"
    raise pytest.UsageError(
        f"ACTORS_TELEMETRY_PASS must be asyncio, all or 0, not {mode!r}"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Add the traced backend variants to every async test of the directory
    (the ``anyio_backend`` fixture's own variants, plus traced copies).

    As a ``parametrize`` mark, added before pytest reads the marks: the
    fixture's own parametrization then gives way to it, as it does to a
    test's own ``@pytest.mark.parametrize("anyio_backend", ...)``.
    """
    mode = _mode()
    if "anyio_backend" not in metafunc.fixturenames or mode == "off":
        return
    definition = metafunc.definition
    if any(
        "anyio_backend" in str(mark.args[0]).replace(" ", "").split(",")
        for mark in definition.iter_markers("parametrize")
    ):
        return  # the test chose its backends itself
    # The fixture's own parameters (tests/conftest.py): kept as they are.
    # (pytest keeps them in a private attribute, stable since pytest 3.)
    definitions = metafunc._arg2fixturedefs.get("anyio_backend")
    if not definitions or not definitions[-1].params:
        return
    params = [
        param if isinstance(param, type(pytest.param(None))) else pytest.param(param)
        for param in definitions[-1].params
    ]
    traced = []
    for param in params:
        (value,) = param.values
        name, options = value if isinstance(value, tuple) else (value, {})
        if mode == "asyncio" and (name != "asyncio" or options):
            continue
        traced.append(
            pytest.param(
                Traced((name, options)), id=f"{param.id}-traced", marks=param.marks
            )
        )
    definition.add_marker(pytest.mark.parametrize("anyio_backend", [*params, *traced]))


@pytest.fixture(autouse=True)
def telemetry_pass(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[bool]:
    """In a traced variant, ``ActorSystem()`` defaults to a no-op
    ``Telemetry``; yields whether it does."""
    callspec = getattr(request.node, "callspec", None)
    backend = callspec.params.get("anyio_backend") if callspec is not None else None
    if not isinstance(backend, Traced):
        yield False
        return
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    telemetry = actors.Telemetry(
        tracer_provider=NoOpTracerProvider(), meter_provider=NoOpMeterProvider()
    )
    original = actors.ActorSystem.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("telemetry") is None:
            kwargs["telemetry"] = telemetry
        original(self, *args, **kwargs)

    monkeypatch.setattr(actors.ActorSystem, "__init__", __init__)
    yield True
