"""Signals: items the runtime sends that the quota never counts."""

from __future__ import annotations

__all__ = ["Signal"]


class Signal:
    """Base class of runtime signals (``Terminated``, timer firings, ...).

    A mailbox tells a signal from a message by this class alone, so messages
    need no wrapper object: ``send_signal`` takes instances of it, and
    ``try_send`` / ``send`` reject them with ``TypeError``.
    """

    __slots__ = ()
