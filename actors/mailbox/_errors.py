"""The mailbox layer's errors, each raised in one documented situation."""

from __future__ import annotations

from anyio import EndOfStream

__all__ = ["EndOfMailbox", "MailboxClosed", "MailboxFull"]


class MailboxFull(Exception):
    """Raised by ``try_send`` (and the runtime's ``tell``) when the mailbox's
    quota is exhausted, or senders are already waiting for it. Nothing was
    enqueued."""


class MailboxClosed(Exception):
    """Raised by every send (``try_send``, ``send``, ``send_signal``) once the
    mailbox is closed, also to senders that were waiting for quota when it
    closed. Closed overrides full. Nothing was enqueued."""


class EndOfMailbox(EndOfStream):
    """Raised to the consumer when the mailbox is closed and nothing is left in
    it. A subclass of ``anyio.EndOfStream``, so ``async for`` over a mailbox
    ends cleanly."""
