"""A worker node process: ``python -m actors.node --connect URL``.

It joins a system's NATS server as a node, hosts the public top-level actor
classes of the modules named with ``--module`` for remote spawning
(``system.remote.spawn``) and for pools across processes
(``system.remote.spawn_pool``), and leaves cleanly on SIGTERM or SIGINT: its
pool members hand back the jobs they had not started, finish the running ones
(within ``--grace`` seconds), report them, and the node leaves its system.
``host(system, modules)`` makes a system of your own program such a node.
See docs/how-to/scale-out.md.
"""

from ..channel._public import publish as _publish
from ._serve import host as host
from ._serve import serve as serve

__all__ = ["host", "serve"]

# Public names report this package as their module (see actors.channel._public).
_publish(globals())
