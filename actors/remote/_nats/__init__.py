"""An anyio-native client of NATS's core protocol (asyncio, uvloop and Trio).

Private to the remote layer: ``connect`` gives a ``Client`` inside an
``async with`` that owns its tasks; the errors are in ``_errors``::

    async with connect("nats://127.0.0.1:4222") as nc:
        sub = await nc.subscribe("greet.*")
        await nc.publish("greet.joe", b"hello", headers={"Trace": "1"})
        msg = await sub.next_msg(timeout=1)
        reply = await nc.request("service", b"ping", timeout=2)

Modules: ``_protocol`` (the wire: parser, encoders, ``Msg``), ``_connection``
(one connection's handshake: INFO, TLS, CONNECT), ``_auth`` (credentials),
``_session`` (the reader, writer and pinger tasks, reconnection),
``_subscription`` and ``_client`` (the API).
"""

from ._client import Client as Client
from ._client import ClientStatistics as ClientStatistics
from ._client import connect as connect
from ._errors import AuthorizationError as AuthorizationError
from ._errors import ConnectionClosedError as ConnectionClosedError
from ._errors import DisconnectedError as DisconnectedError
from ._errors import MaxPayloadError as MaxPayloadError
from ._errors import NatsError as NatsError
from ._errors import NoRespondersError as NoRespondersError
from ._errors import NoServersError as NoServersError
from ._errors import OutboundBufferFullError as OutboundBufferFullError
from ._errors import PermissionsViolation as PermissionsViolation
from ._errors import ProtocolError as ProtocolError
from ._errors import RequestTimeoutError as RequestTimeoutError
from ._errors import ServerError as ServerError
from ._errors import SlowConsumerError as SlowConsumerError
from ._errors import StaleConnectionError as StaleConnectionError
from ._protocol import Msg as Msg
from ._subscription import Subscription as Subscription

__all__ = [
    "AuthorizationError",
    "Client",
    "ClientStatistics",
    "ConnectionClosedError",
    "DisconnectedError",
    "MaxPayloadError",
    "Msg",
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
    "Subscription",
    "connect",
]
