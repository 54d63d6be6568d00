"""The errors of ``actors.delivery``, each raised where its docstring says."""

from __future__ import annotations

__all__ = ["DeliveryError", "ProducerFailed"]


class DeliveryError(Exception):
    """Base class of the errors of ``actors.delivery``."""


class ProducerFailed(DeliveryError):
    """A producer controller's durable queue failed to store a message (the
    ``__cause__``: a ``JournalError``, a ``SequenceConflict`` when another
    process runs the same producer id), or the controller was stopped. Every
    waiting and later ``send`` or ``ask`` raises it: what was stored is
    resent by a producer controller started again on the same queue."""
