"""Remote actors over NATS.

The foundation so far: an anyio-native NATS client (``actors.remote._nats``)
and a launcher of the official ``nats-server`` binary
(``actors.remote._server``). The remote layer imports the runtime and the
channel core; the runtime never imports it.
"""

__all__: list[str] = []
