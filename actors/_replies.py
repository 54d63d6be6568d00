"""What a handler may return besides a plain reply."""

from __future__ import annotations

from typing import final

__all__ = ["ErrorReply"]


@final
class ErrorReply:
    """Return ``ErrorReply(exc)`` from a handler to answer an ``ask`` with an
    error without failing (Akka's ``StatusReply.error``, OTP's
    ``{reply, {error, Reason}}``, Pykka's failed future): the asker's ``ask``
    raises ``exc`` (the very object), and on the actor's side nothing
    happens: no failure counted, no traceback logged, no supervisor, the
    actor goes on with its next message.

    To a told (or sent) message, whose return value nobody takes, it is
    ignored like any other return value. A remote asker gets the exception
    as the remote codec carries any handler exception (its registered type,
    else ``RemoteError``).

    Args:
        error: the exception the asker raises (an ``Exception`` instance).

    Raises:
        TypeError: ``error`` is not an ``Exception`` instance.
    """

    __slots__ = ("error",)

    error: Exception

    def __init__(self, error: Exception) -> None:
        if not isinstance(error, Exception):
            raise TypeError(
                "ErrorReply takes an Exception instance, not "
                f"{type(error).__name__}: {error!r}"
            )
        self.error = error

    def __repr__(self) -> str:
        try:
            return f"ErrorReply({self.error!r})"
        except Exception:
            return f"ErrorReply(<{type(self.error).__qualname__}>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErrorReply) and other.error is self.error

    def __hash__(self) -> int:
        return hash((ErrorReply, id(self.error)))
