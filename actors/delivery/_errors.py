"""The errors of ``actors.delivery``, each raised where its docstring says."""

from __future__ import annotations

from .. import ActorStopped, SystemNotRunning

__all__ = ["DeliveryError", "ProducerFailed", "ProducerStopped", "ProducerSystemExited"]


class DeliveryError(Exception):
    """Base class of the errors of ``actors.delivery``."""


class ProducerFailed(DeliveryError):
    """A producer controller's durable queue failed to store a message (the
    ``__cause__``: a ``JournalError``, a ``SequenceConflict`` when another
    process runs the same producer id), or the controller was stopped
    ([``ProducerStopped``][actors.delivery.ProducerStopped]). Every
    waiting and later ``send`` or ``ask`` (and ``wait_confirmed``,
    ``wait_done``) raises it: what was stored is resent by a producer
    controller started again on the same queue."""


class ProducerStopped(ProducerFailed, ActorStopped):
    """A producer controller or work queue was stopped (its ``stop()``), or
    its actor ended (its parent stopped, its system is stopping). Both a
    ``ProducerFailed`` and an [``ActorStopped``][actors.ActorStopped], as
    the ask of a stopped actor raises: every call waiting then (``send``,
    ``ask``, ``wait_confirmed``, ``wait_done``) raises it, none hangs."""


class ProducerSystemExited(ProducerStopped, SystemNotRunning):
    """The system of a producer controller, work queue or consumer
    controller has exited: every later call of the handle raises it (a
    [``SystemNotRunning``][actors.SystemNotRunning], as every call of a ref
    that outlived its system), so nothing is accepted and lost silently."""
