"""Failure logging under the user's control: per system
(ActorSystem(log_failures=...)) and per supervisor strategy (Akka's
loggingEnabled), with level and traceback; silenced failures are still
counted and supervised."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from actors import (
    Actor,
    ActorSystem,
    Directive,
    FailureLogging,
    OneForOne,
    SupervisorStrategy,
)

from ._support import wait_all_blocked

pytestmark = pytest.mark.anyio


class Fails(Actor):
    def receive(self, message: Any) -> Any:
        if message == "boom":
            raise RuntimeError("boom")
        return message


def failure_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if getattr(r, "actor_event", None) == "failure"
    ]


async def fail_once(system: ActorSystem, factory: Any = Fails) -> None:
    ref = system.spawn(factory)
    ref.tell("boom")
    await wait_all_blocked()
    assert await ref.ask("after") == "after"


async def test_by_default_a_failure_is_a_warning_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem() as system:
        await fail_once(system)
    (record,) = failure_records(caplog)
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert "failed: RuntimeError('boom')" in record.getMessage()


async def test_log_failures_false_silences_failures_but_still_counts_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem(log_failures=False) as system:
        await fail_once(system)
    assert failure_records(caplog) == []
    assert system.failures == 1 and system.restarts == 1


async def test_the_system_chooses_level_and_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    setting = FailureLogging(level=logging.INFO, traceback=False)
    async with ActorSystem(log_failures=setting) as system:
        await fail_once(system)
    (record,) = failure_records(caplog)
    assert record.levelno == logging.INFO
    assert record.exc_info is None


class QuietParent(Actor):
    """Resumes its children's failures without logging them."""

    supervisor_strategy = OneForOne(
        decider=lambda exc: Directive.RESUME, log_failures=False
    )

    def on_start(self) -> None:
        self.child = self.context.spawn(Fails)

    async def receive(self, message: Any) -> Any:
        return await self.child.ask(message) if message != "boom" else (
            self.child.tell(message)
        )


async def test_a_strategy_silences_its_childrens_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    async with ActorSystem() as system:
        parent = system.spawn(QuietParent)
        parent.tell("boom")
        await wait_all_blocked()
        assert await parent.ask("after") == "after"
        await fail_once(system)  # a top-level actor: the system's setting
    assert system.failures == 2
    (record,) = failure_records(caplog)
    assert record.actor_path.startswith("/user/fails")  # type: ignore[attr-defined]


async def test_a_strategy_can_log_where_the_system_does_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="actors")
    loud = OneForOne(log_failures=FailureLogging(level=logging.ERROR))
    async with ActorSystem(strategy=loud, log_failures=False) as system:
        await fail_once(system)
    (record,) = failure_records(caplog)
    assert record.levelno == logging.ERROR


def test_bad_log_failures_arguments_are_type_errors() -> None:
    with pytest.raises(TypeError, match="log_failures"):
        ActorSystem(log_failures="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="log_failures"):
        ActorSystem(log_failures=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="log_failures"):
        SupervisorStrategy(log_failures=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="level"):
        FailureLogging(level="ERROR")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="traceback"):
        FailureLogging(traceback=1)  # type: ignore[arg-type]
    assert OneForOne(log_failures=True).log_failures is True
