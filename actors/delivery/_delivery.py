"""``Delivery``: what a consumer actor receives from its consumer controller
(as Akka's ``ConsumerController.Delivery``)."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Delivery"]

M = TypeVar("M", covariant=True)


class Delivery(Generic[M]):
    """One message from a producer, handed to the consumer actor by its
    consumer controller (in a batch from its mailbox, or as an ``ask``: see
    [``ConsumerController``][actors.delivery.ConsumerController]): the
    handler's return (its value is the reply of a producer's ``ask``)
    confirms it; a handler that raises leaves it, and every message after
    it, unconfirmed, and the controller hands them over again, in order (to
    the restarted actor, after ``retry_interval`` seconds). A consumer
    actor that stashes it (``self.stash()``) has not handled it: it is
    confirmed when a handler returns with it after the unstash, and nothing
    after it is handed over before.

    The consumer controller hands each message over once, in order per
    producer, while it lives (duplicates from the wire are dropped). A
    message handled by a consumer whose node then died before its
    confirmation got out is handed over again to the next consumer: a
    handler whose effects must happen once keeps ``key`` with its effect, in
    the same transaction, and skips a key it has seen (effectively once).

    Attributes:
        message: the producer's message.
        producer_id: the producer's id.
        epoch: the producer's numbering (a producer without a durable queue
            starts a new one each time it is made).
        seq_nr: the message's number in that numbering: 1, 2, 3, ...
        job_id: the job's id when the message is a job of a
            [``WorkQueue``][actors.delivery.WorkQueue] (the same on every
            worker it runs on: a handler's idempotency key), else None.
    """

    __slots__ = ("epoch", "job_id", "message", "producer_id", "seq_nr")
    __match_args__ = ("message",)

    def __init__(
        self,
        message: M,
        producer_id: str,
        epoch: str,
        seq_nr: int,
        job_id: int | None = None,
    ) -> None:
        self.message = message
        self.producer_id = producer_id
        self.epoch = epoch
        self.seq_nr = seq_nr
        self.job_id = job_id

    @property
    def key(self) -> tuple[str, str, int]:
        """``(producer_id, epoch, seq_nr)``: unique per message, the same
        for every redelivery of it (the idempotency key)."""
        return (self.producer_id, self.epoch, self.seq_nr)

    def __repr__(self) -> str:
        return (
            f"Delivery({self.message!r}, producer_id={self.producer_id!r}, "
            f"seq_nr={self.seq_nr})"
        )
