"""Signals: items the runtime sends that the quota never counts."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["SIGNAL_CLASSES", "Signal"]

#: ``Signal`` and every subclass of it, added as each class is made: a
#: mailbox tells a signal from a message by ``type(item) in SIGNAL_CLASSES``,
#: one set lookup, cheaper than ``isinstance`` (which walks the class's MRO)
#: on the per-message path.
SIGNAL_CLASSES: Final[set[type]] = set()


class Signal:
    """Base class of runtime signals (``Terminated``, timer firings, ...).

    A mailbox tells a signal from a message by this class alone, so messages
    need no wrapper object: ``send_signal`` takes instances of it, and
    ``try_send`` / ``send`` reject them with ``TypeError``.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        SIGNAL_CLASSES.add(cls)


SIGNAL_CLASSES.add(Signal)
