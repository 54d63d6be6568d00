"""The errors of the NATS client, each raised where its docstring says."""

from __future__ import annotations

__all__ = [
    "AuthorizationError",
    "BucketNotFoundError",
    "ConnectionClosedError",
    "DisconnectedError",
    "JetStreamError",
    "JetStreamNotEnabledError",
    "KeyExistsError",
    "KeyNotFoundError",
    "MaxPayloadError",
    "MessageNotFoundError",
    "NatsError",
    "NoRespondersError",
    "NoServersError",
    "NoStreamResponseError",
    "OutboundBufferFullError",
    "PermissionsViolation",
    "ProtocolError",
    "RequestTimeoutError",
    "ServerError",
    "SlowConsumerError",
    "StaleConnectionError",
    "StreamNameInUseError",
    "StreamNotFoundError",
    "WrongLastSequenceError",
]


class NatsError(Exception):
    """Base class of every error the NATS client raises."""


class ConnectionClosedError(NatsError):
    """The client is closed: by ``Client.close``, by leaving its ``async with``,
    or because it gave up reconnecting (the cause is chained as ``__cause__``).

    Raised by every operation on a closed client, by a pending ``Client.request``
    or ``Client.flush`` when the client closes under it, and by a
    subscription's iteration when the client failed.
    """


class DisconnectedError(NatsError):
    """The connection broke before the server answered a ``Client.flush``.

    What was written before the break may or may not have reached the server
    (NATS core delivery is at-most-once); the client reconnects on its own.
    """


class NoServersError(NatsError):
    """No server of the list accepted a connection when the client started.

    ``__cause__`` is the error of the last attempt.
    """


class NoRespondersError(NatsError):
    """A request's subject has no subscriber: the server answered at once with
    the ``503`` no-responders status instead of letting the request time out.
    """


class RequestTimeoutError(NatsError, TimeoutError):
    """No reply came within the request's timeout."""


class MaxPayloadError(NatsError, ValueError):
    """A message (headers and payload) is larger than the server's ``max_payload``.

    Raised at the publishing call; nothing is sent and the connection is intact.
    """


class OutboundBufferFullError(NatsError):
    """The outbound buffer is full: the client is disconnected (and holds
    ``max_pending_bytes`` of unsent commands already), or a non-waiting publish
    found it full while connected.
    """


class ProtocolError(NatsError):
    """The server sent bytes that are not the NATS protocol: an unknown
    operation, a malformed control line or header block, or a control line
    longer than the limit. The connection is closed.
    """


class ServerError(NatsError):
    """The server sent ``-ERR``; the message is the server's text.

    Every ``-ERR`` but a permissions violation ends the connection (the server
    closes it after sending one).
    """


class AuthorizationError(ServerError):
    """The server refused the credentials (``Authorization Violation`` and the
    like). Raised by ``connect`` when it happens on the first connection."""


class PermissionsViolation(ServerError):
    """The server refused one publish or subscription for lack of permissions.

    Not fatal: the connection stays up. Reported to the client's
    ``error_callback``.
    """


class StaleConnectionError(NatsError):
    """The server did not answer ``max_outstanding_pings`` client PINGs in a row,
    or said ``Stale Connection``; the client drops the connection and reconnects.
    """


class SlowConsumerError(NatsError):
    """A subscription's buffer was full and a message for it was dropped.

    Reported to the client's ``error_callback`` when a subscription starts
    dropping; the subscription's ``dropped`` counter counts every dropped message.
    """

    def __init__(self, subject: str, sid: int) -> None:
        super().__init__(
            f"slow consumer: subscription {sid} on {subject!r} is full; "
            "messages are being dropped"
        )
        self.subject = subject
        self.sid = sid


# -- JetStream ------------------------------------------------------------------


class JetStreamError(NatsError):
    """The JetStream API answered with an error (or not as its schema says).

    Raised by the methods of ``JetStream`` and ``KeyValue``; the subclasses
    name the errors a program handles.

    Attributes:
        code: the HTTP-like status of the error (400, 404, 503, ...; 0 when
            the answer was not an API error at all).
        err_code: the JetStream error code (10071 for a wrong last sequence,
            10059 for a missing stream, ...; 0 when none was given).
        description: the server's text.
    """

    def __init__(self, code: int, err_code: int, description: str) -> None:
        super().__init__(f"JetStream error {code} ({err_code}): {description}")
        self.code = code
        self.err_code = err_code
        self.description = description

    def __reduce__(self) -> tuple[type, tuple[int, int, str]]:
        return (type(self), (self.code, self.err_code, self.description))


class JetStreamNotEnabledError(JetStreamError):
    """Nothing answers on the JetStream API: the server (or the account) runs
    without JetStream (start ``nats-server`` with ``-js``), or the API
    prefix is wrong (errors 10039 and 10076, or no responders)."""


class StreamNotFoundError(JetStreamError):
    """The stream does not exist (error 10059), or does not answer direct
    gets (it was made without ``allow_direct``)."""


class StreamNameInUseError(JetStreamError):
    """A stream of that name exists with another configuration (error 10058)."""


class MessageNotFoundError(JetStreamError):
    """No stored message matches the get (error 10037, or a direct get's
    ``404`` status)."""


class WrongLastSequenceError(JetStreamError):
    """A publish expected another last sequence (error 10071): of the
    subject with ``expected_last_subject_sequence`` (a ``KeyValue.update``
    or ``create`` whose revision is stale), of the stream with
    ``expected_last_sequence``. Nothing was stored.

    Attributes:
        last: the actual last sequence, as the server reported it, or None.
    """

    @property
    def last(self) -> int | None:
        """The actual last sequence the server reported (None: not given)."""
        _, _, tail = self.description.rpartition(":")
        tail = tail.strip()
        return int(tail) if tail.isdigit() else None


class NoStreamResponseError(JetStreamError):
    """A JetStream publish had no answer at once: no stream takes the subject
    (the server's no-responders status). Nothing was stored."""


class KeyNotFoundError(MessageNotFoundError):
    """A key-value ``get`` found no value: the key was never written, or its
    last entry is a delete or purge marker (or ``revision`` is not one of
    the key's).

    Attributes:
        key: the key.
    """

    def __init__(self, key: str) -> None:
        super().__init__(404, 10037, f"no value under the key {key!r}")
        self.key = key

    def __reduce__(self) -> tuple[type, tuple[str]]:  # type: ignore[override]
        return (type(self), (self.key,))


class KeyExistsError(WrongLastSequenceError):
    """A key-value ``create`` found a live value under the key."""


class BucketNotFoundError(StreamNotFoundError):
    """The key-value bucket does not exist."""
