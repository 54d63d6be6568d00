"""The errors of the NATS client, each raised where its docstring says."""

from __future__ import annotations

__all__ = [
    "AuthorizationError",
    "ConnectionClosedError",
    "DisconnectedError",
    "MaxPayloadError",
    "NatsError",
    "NoRespondersError",
    "NoServersError",
    "OutboundBufferFullError",
    "PermissionsViolation",
    "ProtocolError",
    "RequestTimeoutError",
    "ServerError",
    "SlowConsumerError",
    "StaleConnectionError",
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
