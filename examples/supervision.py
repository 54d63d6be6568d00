"""Supervision: a dispatcher supervises flaky workers; watch what it decides.

    python examples/supervision.py [--jobs 60] [--seed 7] [--backend trio]

The ``dispatcher`` spawns three workers and hands each job to one of them in
turn. A seeded random draw makes some jobs fail, in three ways, and the
dispatcher's strategy decides what happens to the worker:

* ``ValueError`` (a flaky job): restart the worker, a fresh instance;
* ``KeyError`` (bad input): resume it, keeping its state (its job count);
* more than 3 restarts within 60 seconds: the dispatcher gives up, stops its
  workers and fails itself (escalation); the system's guardian restarts it.

Every decision is printed as it happens, from the ``actors`` logger's records
(their ``actor_event`` attribute says which kind), together with the
``Terminated`` signals the dispatcher watches for. At the end: how many jobs
succeeded and the system's restart and escalation counts. The same seed gives
the same story on every backend.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from dataclasses import dataclass
from typing import Any

import anyio

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    Directive,
    OneForOne,
    Terminated,
)

WORKERS = 3


@dataclass(frozen=True, slots=True)
class Job:
    """Job ``n``; ``fault`` is what goes wrong with it ("" when nothing)."""

    n: int
    fault: str


class Worker(Actor):
    """Does jobs; raises what the job's fault says."""

    def __init__(self) -> None:
        self.done = 0  # jobs done by this instance: a restart resets it

    def receive(self, job: Job) -> str:
        if job.fault == "flaky":
            raise ValueError(f"job {job.n} hit a flaky disk")
        if job.fault == "bad":
            raise KeyError(f"job {job.n} has no such key")
        self.done += 1
        return f"{self.context.name} did job {job.n} (its {self.done}th)"


class Dispatcher(Actor):
    """Supervises the workers and hands them jobs in turn."""

    supervisor_strategy = OneForOne(
        max_restarts=3,
        within=60.0,
        decider={ValueError: Directive.RESTART, KeyError: Directive.RESUME},
    )

    def on_start(self) -> None:
        self.workers: list[ActorRef[Job]] = []
        for i in range(WORKERS):
            ref = self.context.spawn(Worker, name=f"worker-{i}")
            self.context.watch(ref)
            self.workers.append(ref)

    def on_terminated(self, terminated: Terminated) -> None:
        print(
            f"    dispatcher: {terminated.ref.name} terminated ({terminated.reason!r})"
        )

    async def receive(self, job: Job) -> bool:
        worker = self.workers[job.n % WORKERS]
        try:
            await worker.ask(job)
        except Exception as exc:  # the handler's own exception
            print(f"job {job.n:>2}: {worker.name} failed with {exc!r}")
            return False
        return True


class PrintDecisions(logging.Handler):
    """Prints the supervisors' decisions from the ``actors`` log records."""

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "actor_event", None)
        if event in ("directive", "escalation"):
            print(f"  {event:>10}: {record.getMessage()}")


async def run(jobs: int, seed: int) -> dict[str, Any]:
    """Send ``jobs`` jobs, one after the other, through the dispatcher.

    Returns:
        Counts (jobs, succeeded, failures, restarts, escalations), and under
        "gave up" the exception that shut the system down when the guardian's
        own restart intensity was exceeded (None when it was not).
    """
    rng = random.Random(seed)
    faults = rng.choices(["", "flaky", "bad"], weights=[70, 20, 10], k=jobs)
    logger = logging.getLogger("actors")
    handler = PrintDecisions()
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    # The guardian restarts the dispatcher when it escalates, up to 10 times a
    # minute; one more and the system shuts down with the worker's exception.
    system = ActorSystem(strategy=OneForOne(max_restarts=10, within=60.0))
    ok = 0
    gave_up: Exception | None = None
    try:
        async with system:
            dispatcher = system.spawn(Dispatcher, name="dispatcher")
            for n, fault in enumerate(faults):
                ok += await dispatcher.ask(Job(n, fault))
    except Exception as exc:  # surfaced from async with: the original exception
        gave_up = exc
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return {
        "jobs": jobs,
        "succeeded": ok,
        "failures": system.failures,
        "restarts": system.restarts,
        "escalations": system.escalations,
        "gave up": gave_up,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=60, help="jobs (default 60)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument(
        "--backend", choices=["asyncio", "uvloop", "trio"], default="asyncio"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    backend, options = _backend(args.backend)
    counts = anyio.run(
        run, args.jobs, args.seed, backend=backend, backend_options=options
    )
    if counts["gave up"] is not None:
        print(f"the system gave up: {counts['gave up']!r}")
    print(
        f"{counts['succeeded']} of {counts['jobs']} jobs succeeded; "
        f"failures: {counts['failures']}, restarts: {counts['restarts']}, "
        f"escalations: {counts['escalations']}"
    )


def _backend(name: str) -> tuple[str, dict[str, Any]]:
    if name == "uvloop":
        try:
            import uvloop
        except ModuleNotFoundError:
            sys.exit('--backend uvloop: pip install "anyio-actors[uvloop]"')
        return "asyncio", {"loop_factory": uvloop.new_event_loop}
    return name, {}


if __name__ == "__main__":
    main(sys.argv[1:])
