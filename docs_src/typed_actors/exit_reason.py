"""How an actor ended: an ExitReason, a StopReason or an exception."""

from __future__ import annotations

import anyio

from actors import Actor, ActorSystem, Directive, ExitReason, OneForOne, StopReason


class Job(Actor[str]):
    def receive(self, message: str) -> None:
        if message == "fail":
            raise RuntimeError("the job failed")


def describe(reason: ExitReason) -> str:
    match reason:
        case StopReason.NORMAL:
            return "stopped"
        case StopReason():
            return f"stopped from above ({reason.value})"
        case BaseException():
            return f"failed: {reason!r}"


async def main() -> None:
    strategy = OneForOne(decider={RuntimeError: Directive.STOP})
    async with ActorSystem(strategy=strategy) as system:
        done = system.spawn(Job)
        done.stop()
        assert describe(await done.join()) == "stopped"

        failed = system.spawn(Job)
        failed.tell("fail")
        assert describe(await failed.join()) == (
            "failed: RuntimeError('the job failed')"
        )


if __name__ == "__main__":
    anyio.run(main)
