"""Routine failures resumed without a traceback in the logs, others logged
as errors."""

import logging
from typing import Any

import anyio

from actors import (
    Actor,
    ActorSystem,
    Directive,
    FailureLogging,
    OneForOne,
)


class Parser(Actor):
    def receive(self, message: str) -> int:
        return int(message)  # ValueError on bad input: routine


class Intake(Actor):
    # Bad input is routine: resume the parser and log nothing.
    supervisor_strategy = OneForOne(
        decider={ValueError: Directive.RESUME}, log_failures=False
    )

    def on_start(self) -> None:
        self.parser = self.context.spawn(Parser)

    async def receive(self, message: str) -> Any:
        try:
            return await self.parser.ask(message)
        except ValueError:
            return None


async def main() -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if getattr(record, "actor_event", None) == "failure":
                records.append(record)

    handler = Keep()
    logging.getLogger("actors").addHandler(handler)
    logging.getLogger("actors").setLevel(logging.INFO)
    try:
        # Everything else: one ERROR record per failure, no traceback.
        setting = FailureLogging(level=logging.ERROR, traceback=False)
        async with ActorSystem(log_failures=setting) as system:
            intake = system.spawn(Intake)
            assert await intake.ask("12") == 12
            assert await intake.ask("twelve") is None  # resumed, not logged
            assert system.failures == 1
    finally:
        logging.getLogger("actors").removeHandler(handler)
    assert records == []


if __name__ == "__main__":
    anyio.run(main)
