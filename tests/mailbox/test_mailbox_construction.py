"""Building a mailbox, the values it refuses, its errors and its imports."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import anyio
import pytest

import actors.mailbox
from actors.mailbox import (
    EndOfMailbox,
    Mailbox,
    MailboxClosed,
    MailboxFull,
    Signal,
    WouldBlock,
)

pytestmark = pytest.mark.anyio

MAILBOX_DIR = Path(actors.mailbox.__file__).parent


class Tick(Signal):
    __slots__ = ()


# -- capacity ------------------------------------------------------------------


@pytest.mark.parametrize("capacity", [0, -1])
def test_a_capacity_below_one_raises_value_error(capacity: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Mailbox(capacity)


@pytest.mark.parametrize("capacity", [1.5, True, False, "3", 2.0])
def test_a_capacity_that_is_not_an_integer_raises_type_error(capacity: Any) -> None:
    with pytest.raises(TypeError, match="capacity must be an integer"):
        Mailbox(capacity)


def test_none_means_no_quota() -> None:
    mailbox: Mailbox[int] = Mailbox(None)
    for i in range(10_000):
        mailbox.try_send(i)
    stats = mailbox.statistics()
    assert stats.capacity is None
    assert mailbox.capacity is None
    assert stats.queued_messages == stats.units_in_use == 10_000
    assert mailbox.receive_nowait_many(10_000) == list(range(10_000))


def test_the_default_capacity_is_no_quota() -> None:
    assert Mailbox().capacity is None


def test_a_mailbox_is_generic_in_its_message_type() -> None:
    mailbox = Mailbox[int](3)
    assert mailbox.capacity == 3
    assert mailbox.statistics().capacity == 3


# -- batch limits --------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, -1])
def test_a_batch_limit_below_one_raises_value_error(limit: int) -> None:
    mailbox: Mailbox[int] = Mailbox()
    mailbox.try_send(1)
    with pytest.raises(ValueError, match="at least 1"):
        mailbox.receive_nowait_many(limit)
    # nothing was taken
    assert mailbox.receive_nowait() == 1


@pytest.mark.parametrize("limit", [1.5, True, "2"])
def test_a_batch_limit_that_is_not_an_integer_raises_type_error(limit: Any) -> None:
    mailbox: Mailbox[int] = Mailbox()
    mailbox.try_send(1)
    with pytest.raises(TypeError, match="limit must be an integer"):
        mailbox.receive_nowait_many(limit)
    assert len(mailbox) == 1


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
async def test_receive_many_validates_its_limit_before_waiting(limit: Any) -> None:
    # An empty mailbox: a bad limit must raise at once rather than park.
    mailbox: Mailbox[int] = Mailbox()
    with pytest.raises((TypeError, ValueError)):
        await mailbox.receive_many(limit)
    assert mailbox.statistics().wakeups == 0


# -- signals and messages are told apart by class --------------------------------


def test_try_send_rejects_a_signal_with_type_error() -> None:
    mailbox: Mailbox[object] = Mailbox(1)
    with pytest.raises(TypeError, match="send_signal"):
        mailbox.try_send(Tick())
    assert len(mailbox) == 0
    assert mailbox.statistics().units_in_use == 0


async def test_send_rejects_a_signal_with_type_error() -> None:
    mailbox: Mailbox[object] = Mailbox(1)
    with pytest.raises(TypeError):
        await mailbox.send(Tick())
    mailbox.try_send("full")
    # also when the quota is exhausted: it must not park with a signal
    with pytest.raises(TypeError):
        await mailbox.send(Tick())
    assert mailbox.statistics().waiting_senders == 0
    assert mailbox.take_all() == ["full"]


@pytest.mark.parametrize("not_a_signal", [1, "text", None, object(), Signal])
def test_send_signal_rejects_a_non_signal_with_type_error(not_a_signal: Any) -> None:
    mailbox: Mailbox[object] = Mailbox(1)
    with pytest.raises(TypeError, match="takes a Signal"):
        mailbox.send_signal(not_a_signal)
    assert len(mailbox) == 0


def test_a_rejected_item_raises_type_error_even_on_a_closed_mailbox() -> None:
    # The programming error is reported first; closed is a runtime condition.
    mailbox: Mailbox[object] = Mailbox(1)
    mailbox.close()
    with pytest.raises(TypeError):
        mailbox.try_send(Tick())
    with pytest.raises(TypeError):
        mailbox.send_signal(1)  # type: ignore[arg-type]


# -- errors --------------------------------------------------------------------


def test_errors_live_in_one_module_and_are_exported_from_actors_mailbox() -> None:
    for error in (MailboxFull, MailboxClosed, EndOfMailbox):
        # Defined in _errors, reported as public (actors.mailbox.MailboxFull).
        assert getattr(actors.mailbox._errors, error.__name__) is error
        assert error.__module__ == "actors.mailbox"
        assert error.__name__ in actors.mailbox.__all__
        assert getattr(actors.mailbox, error.__name__) is error
        assert error.__doc__
    assert actors.mailbox.WouldBlock is anyio.WouldBlock is WouldBlock


def test_end_of_mailbox_is_an_anyio_end_of_stream() -> None:
    assert issubclass(EndOfMailbox, anyio.EndOfStream)


def test_the_public_names_are_exactly_the_exported_ones() -> None:
    for name in actors.mailbox.__all__:
        assert hasattr(actors.mailbox, name)


# -- layering ------------------------------------------------------------------


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
        elif isinstance(node, ast.Import):
            found.extend((0, alias.name) for alias in node.names)
    return found


def test_the_mailbox_builds_on_the_channel_core_lowlevel_api_not_its_streams() -> (
    None
):
    channel_modules: set[str] = set()
    for path in sorted(MAILBOX_DIR.glob("*.py")):
        for level, module in _imports(path):
            if level == 0:
                # never the runtime, never the public channel package
                assert not module.startswith("actors"), (path.name, module)
            elif level == 2:
                assert module == "channel.lowlevel", (path.name, module)
                channel_modules.add(module)
            else:
                assert level == 1, (path.name, level, module)
    assert channel_modules == {"channel.lowlevel"}


def test_what_the_caller_sees_under_a_native_cancel_is_documented() -> None:
    # The contract asks to document the asyncio Task.cancel() race outcome;
    # tests/mailbox/test_mailbox_native_cancellation.py checks the behaviour.
    send_doc = Mailbox.send.__doc__ or ""
    receive_doc = Mailbox.receive.__doc__ or ""
    assert "Task.cancel()" in send_doc
    assert "do not resend" in send_doc
    assert "Task.cancel()" in receive_doc
    assert "takes nothing" in receive_doc


def test_the_runtime_re_exports_the_mailbox_errors() -> None:
    import actors

    assert actors.MailboxFull is MailboxFull
    assert actors.MailboxClosed is MailboxClosed
