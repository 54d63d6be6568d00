"""A program for the Ctrl-C tests: busy and parked actors, channels, mailboxes
and asks, then SIGINT. ``test_keyboard_interrupt.py`` runs it in a subprocess:

    python tests/ki/ki_program.py BACKEND SEED MODE

BACKEND is asyncio, uvloop or trio. MODE says where SIGINT comes:

* ``inject``: while ping-pong pairs bounce messages (tasks keep parking and
  waking), at the start of the N-th call of a function of the channel core,
  the mailbox or the ask envelope, N drawn from SEED: a Ctrl-C landing in the
  middle of their operations, e.g. between registering a waiter and parking on
  it (see :func:`inject_sigint_after`);
* ``parked``: from the main task once every task is parked (channel receivers
  and senders, mailbox senders waiting for quota, askers waiting for a reply,
  idle actors).

It exits with :data:`KEYBOARD_INTERRUPT` when ``KeyboardInterrupt`` comes out
of the run. Any other outcome (another exception, ``TrioInternalError``, a
normal end) exits with another status; a hang is the caller's timeout.
"""

from __future__ import annotations

import contextlib
import dis
import os
import random
import signal
import sys
import traceback
from typing import Any

import anyio
import anyio.lowlevel

import actors
from actors import Actor, ActorRef, ActorStopped, ActorSystem
from actors.channel import create_memory_object_stream
from actors.mailbox import Mailbox

KEYBOARD_INTERRUPT = 42  #: the exit status when KeyboardInterrupt surfaced
RAN_OUT = 3  #: the run ended without a KeyboardInterrupt

_ACTORS = os.path.dirname(actors.__file__)
#: Where ``inject`` lands: the code that registers waiters and parks on them.
INJECT_IN = tuple(
    os.path.join(_ACTORS, *part)
    for part in (("channel", ""), ("mailbox", ""), ("_envelope.py",))
)


class Bouncer(Actor):
    """Tells every number it gets back to its partner, plus one, forever."""

    def __init__(self) -> None:
        self.partner: ActorRef[Any] | None = None

    def receive(self, message: Any) -> None:
        if isinstance(message, tuple):  # ("partner", ref)
            self.partner = message[1]
        elif self.partner is not None:
            # The partner may stop first on the way out.
            with contextlib.suppress(ActorStopped):
                self.partner.tell(message + 1)


class Silent(Actor):
    """Never answers an ask: its askers stay parked."""

    async def receive(self, message: Any) -> None:
        await anyio.sleep_forever()


class Idle(Actor):
    """Parked in its mailbox, waiting for messages that never come."""

    def receive(self, message: Any) -> None:
        pass


async def main(seed: int, mode: str) -> None:
    rng = random.Random(seed)
    _, rx = create_memory_object_stream[int](0)
    full_tx, _ = create_memory_object_stream[int](1)
    full_tx.send_nowait(0)
    mailbox: Mailbox[int] = Mailbox(capacity=1)
    mailbox.try_send(0)
    system = ActorSystem(shutdown_timeout=0.2)  # Silent never returns
    async with system, anyio.create_task_group() as tg:
        for _ in range(20):
            system.spawn(Idle)
        for _ in range(8):
            left, right = system.spawn(Bouncer), system.spawn(Bouncer)
            left.tell(("partner", right))
            right.tell(("partner", left))
            if mode == "inject":
                left.tell(0)
        silent = system.spawn(Silent)
        for _ in range(5):
            tg.start_soon(silent.ask, "hello", 3600)
        for _ in range(5):
            tg.start_soon(rx.receive)  # parked receivers of a rendezvous channel
            tg.start_soon(rx.receive_many, 4)
            tg.start_soon(full_tx.send, 1)  # parked senders of a full channel
        for i in range(3):
            tg.start_soon(mailbox.send, i)  # parked for a unit of quota
        if mode == "inject":
            inject_sigint_after(rng.randrange(1, 20_000))
        else:
            await wait_all_blocked()
            signal.raise_signal(signal.SIGINT)
        await anyio.sleep(60)


def inject_sigint_after(calls: int) -> None:
    """Raise SIGINT in this thread at the start of the ``calls``-th call, from
    now on, of a function of :data:`INJECT_IN`.

    A function's start is a point where CPython runs pending signal handlers,
    so this is a Ctrl-C landing exactly there, as a real one can: in the middle
    of an operation, between registering a waiter and parking on it, between
    taking an item and handing it on. (Not where a coroutine resumes after an
    ``await``: CPython never runs signal handlers there, so neither does this.)
    """
    count = 0
    starts: dict[Any, int] = {}

    def hook(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(INJECT_IN):
            return
        start = starts.get(code)
        if start is None:
            start = starts[code] = next(
                i.offset for i in dis.get_instructions(code) if i.opname == "RESUME"
            )
        if frame.f_lasti > start:
            return  # a coroutine resuming, not a call
        count += 1
        if count >= calls:
            sys.setprofile(None)
            signal.raise_signal(signal.SIGINT)

    sys.setprofile(hook)


async def wait_all_blocked() -> None:
    """Return once every other task is parked (scheduler-exact, no sleeps)."""
    import sniffio

    if sniffio.current_async_library() == "trio":
        import trio.testing

        await trio.testing.wait_all_tasks_blocked()
        return
    import asyncio

    me = asyncio.current_task()
    for _ in range(10_000):
        await anyio.lowlevel.checkpoint()
        if all(t is me or t.done() or _parked(t) for t in asyncio.all_tasks()):
            return
    raise AssertionError("tasks kept running")


def _parked(task: Any) -> bool:
    waiter = task._fut_waiter
    return waiter is not None and not waiter.done()


def run(backend: str, seed: int, mode: str) -> int:
    options: dict[str, Any] = {}
    if backend == "trio":
        # Trio shuffles runnable tasks with its own generator (private, hence
        # getattr): seeded, a seed replays the same run.
        import trio  # noqa: F401

        rng = getattr(sys.modules.get("trio._core._run"), "_r", None)
        if rng is not None:
            rng.seed(seed)
    elif backend == "uvloop":
        import uvloop

        backend, options = "asyncio", {"loop_factory": uvloop.new_event_loop}
    try:
        anyio.run(main, seed, mode, backend=backend, backend_options=options)
    except KeyboardInterrupt:
        traceback.print_exc()
        print("KeyboardInterrupt", flush=True)
        return KEYBOARD_INTERRUPT
    return RAN_OUT


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
