"""Remote actors over NATS.

The building blocks so far, each on its own and tested on its own:

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
* ``_errors``: ``DecodeError``, ``FrameTooLarge``, ``NodeUnreachable``,
  ``NodeDown``, ``RemoteActorError``.

The remote layer imports the channel core, the mailbox layer and the
runtime's public face; the runtime never imports it.
"""

__all__: list[str] = []
