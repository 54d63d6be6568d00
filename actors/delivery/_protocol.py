"""The messages of reliable delivery between a producer controller and a
consumer controller, as Akka Typed's ``ProducerController`` /
``ConsumerController`` protocol (facts, not code).

Five messages travel, local or over ``actors.remote`` (each a msgspec
Struct, registered on a node's codec by ``register_protocol`` under
``actors.delivery.<Name>``):

* ``Hello`` (producer -> consumer): "I am producer ``producer_id`` of numbering
  ``epoch``; everything up to ``confirmed`` is confirmed"; sent when a consumer
  is registered, and again while no demand comes back.
* ``Sequenced`` (producer -> consumer): a batch of consecutive messages,
  numbered from ``seq_nr`` on (1, 2, 3, ... per producer and epoch), with the
  producer's confirmed number when it was sent. A local target gets the
  message objects themselves (``messages``); a remote one their codec tags
  and bodies (``tags``, ``bodies``), each encoded once when the producer
  accepted it. The producer's ref travels only in the first batch after a
  consumer answered and in resends (``producer``; None otherwise): the
  consumer knows it from ``Hello``. At most ``MAX_BATCH`` messages.
* ``Request`` (consumer -> producer): "confirmed up to ``confirmed``; you may
  send up to ``up_to``": the confirmation and the demand in one message.
* ``Resend`` (consumer -> producer): "a gap: send again from ``from_seq_nr``".
* ``Register`` (consumer -> producer): "send to me from now on" (a consumer
  started again on a new node incarnation).

An epoch names a numbering: a producer without a durable queue starts a new
one (at 1) each time it is made; a durable producer keeps its epoch in the
journal and goes on numbering after a restart. A consumer that sees a new
epoch of a producer id starts afresh for it; the same epoch continues.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec

from .. import ActorRef

__all__ = [
    "MAX_BATCH",
    "MAX_ID",
    "Hello",
    "Request",
    "Register",
    "Resend",
    "Sequenced",
    "protocol_classes",
]

#: The most characters of a producer id or an epoch (longer ones are refused).
MAX_ID: Final = 255
#: The most messages in one ``Sequenced`` batch (a longer one is refused
#: when it is decoded).
MAX_BATCH: Final = 256


class Hello(msgspec.Struct, frozen=True, array_like=True):
    """Producer to consumer: who it is and what is confirmed (asks for a
    ``Request``)."""

    producer_id: str
    epoch: str
    producer: ActorRef[Any]
    confirmed: int


class Sequenced(msgspec.Struct, frozen=True, array_like=True):
    """Producer to consumer: messages ``seq_nr``, ``seq_nr + 1``, ... of
    ``producer_id``'s ``epoch``; ``confirmed``: the producer's highest
    confirmed number when it sent them. Local targets get ``messages``;
    remote ones ``tags`` and ``bodies`` (parallel lists, ``messages`` is
    None then). ``producer``: the producer's ref, in the first batch after
    the consumer answered and in resends, else None. ``wants_reply``: the
    numbers whose producer asked and waits for the handler's return value;
    ``job_ids``: each message's id in a work queue (empty: not jobs)."""

    producer_id: str
    epoch: str
    seq_nr: int
    confirmed: int
    producer: ActorRef[Any] | None = None
    tags: Annotated[list[str], msgspec.Meta(max_length=MAX_BATCH)] = []
    bodies: Annotated[list[msgspec.Raw], msgspec.Meta(max_length=MAX_BATCH)] = []
    messages: Any = None
    wants_reply: Annotated[list[int], msgspec.Meta(max_length=MAX_BATCH)] = []
    job_ids: Annotated[list[int], msgspec.Meta(max_length=MAX_BATCH)] = []

    @property
    def count(self) -> int:
        """How many messages the batch holds."""
        messages = self.messages
        return len(self.tags) if messages is None else len(messages)


class Request(msgspec.Struct, frozen=True, array_like=True):
    """Consumer to producer: confirmed up to ``confirmed``, demand up to
    ``up_to``. ``replies``: ``(seq_nr, tag, body)`` of the handlers' return
    values for messages sent with ``wants_reply`` to a remote producer;
    ``local_replies``: ``[(seq_nr, value)]`` to a local one."""

    producer_id: str
    epoch: str
    consumer: ActorRef[Any]
    confirmed: int
    up_to: int
    replies: list[tuple[int, str, msgspec.Raw]] = []
    local_replies: Any = None


class Register(msgspec.Struct, frozen=True, array_like=True):
    """Consumer to producer: send to ``consumer`` from now on (a consumer
    that started again, on a new node incarnation, finds its producer so, as
    Akka's ``RegisterToProducerController``)."""

    consumer: ActorRef[Any]


class Resend(msgspec.Struct, frozen=True, array_like=True):
    """Consumer to producer: messages from ``from_seq_nr`` on were lost or
    came out of order; send them again."""

    producer_id: str
    epoch: str
    consumer: ActorRef[Any]
    from_seq_nr: int


def protocol_classes() -> tuple[type, ...]:
    """The classes both nodes register (``register_protocol``)."""
    return (Hello, Sequenced, Request, Resend, Register)
