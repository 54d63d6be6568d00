"""Ctrl-C: ``KeyboardInterrupt`` always comes out of the run, on every backend.

On Trio, Ctrl-C raises ``KeyboardInterrupt`` in whatever code runs, unless it
is KI-protected. A channel, mailbox or ask operation interrupted half-way (a
waiter registered but the task never parked on it) made Trio reschedule a task
that was not waiting: ``TrioInternalError`` or a hang. Those operations are
KI-protected now, as Trio's own channels are, at no cost per call.

Each case runs ``ki_program.py`` in a subprocess (a signal would hit pytest
itself) with busy and parked actors, channel waiters, mailbox senders and
askers, and checks it ends with ``KeyboardInterrupt``: never
``TrioInternalError``, never a hang (the subprocess timeout).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trio.lowlevel

from actors.channel.lowlevel import current_backend, ki_protected

from .ki_program import KEYBOARD_INTERRUPT

PROGRAM = Path(__file__).with_name("ki_program.py")
TIMEOUT = 60  #: seconds; a run takes about two


def run_program(backend: str, seed: int, mode: str) -> None:
    try:
        done = subprocess.run(
            [sys.executable, str(PROGRAM), backend, str(seed), mode],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"hung after Ctrl-C ({backend}, seed {seed}, {mode}):\n{exc.stderr}"
        ) from None
    output = done.stdout + done.stderr
    assert "TrioInternalError" not in output, output
    assert done.returncode == KEYBOARD_INTERRUPT, (
        f"exit status {done.returncode}, not KeyboardInterrupt:\n{output}"
    )


# Seeds pick where SIGINT lands among the first 20,000 calls of the channel,
# mailbox and ask code (and Trio's scheduling); without the protection nearly
# every run on Trio hung or raised TrioInternalError. On asyncio, anyio's runner
# turns the first Ctrl-C into a cancellation of the main task, then raises it.
@pytest.mark.parametrize(
    ("backend", "seed"),
    [("trio", seed) for seed in range(1, 7)]
    + [(backend, seed) for backend in ("asyncio", "uvloop") for seed in (1, 2)],
)
def test_ctrl_c_inside_waiting_operations_surfaces_as_keyboard_interrupt(
    backend: str, seed: int
) -> None:
    run_program(backend, seed, "inject")


@pytest.mark.parametrize("backend", ["trio", "asyncio", "uvloop"])
def test_ctrl_c_while_everything_is_parked_surfaces_as_keyboard_interrupt(
    backend: str,
) -> None:
    run_program(backend, 1, "parked")


def test_ki_protection_marks_the_function_itself_without_a_wrapper() -> None:
    # No wrapper: the same function object, so no cost per call on any
    # backend; Trio learns of it by its code object, now or on first use.
    def probe() -> bool:
        return trio.lowlevel.currently_ki_protected()

    def unmarked() -> bool:
        return trio.lowlevel.currently_ki_protected()

    assert ki_protected(probe) is probe

    async def check() -> None:
        current_backend()  # the channels' Trio backend, as on first use
        assert probe()
        assert not unmarked()

    trio.run(check)
