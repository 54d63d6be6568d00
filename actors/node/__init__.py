"""A worker node process: ``python -m actors.node --connect URL``.

It joins a system's NATS server as a node, hosts the public top-level actor
classes of the modules named with ``--module`` for remote spawning
(``system.remote.spawn``) and for pools across processes
(``system.remote.spawn_pool``), and leaves cleanly on SIGTERM or SIGINT: its
pool members hand back the jobs they had not started, finish the running ones
(within ``--grace`` seconds), report them, and the node leaves its system.
``host(system, modules)`` makes a system of your own program such a node;
``await run(url, ...)`` runs one in your own event loop.
See docs/how-to/scale-out.md.
"""

from ..channel.lowlevel import publish as _publish
from ._run import host as host
from ._run import run as run

__all__ = ["host", "run"]

# Public names report this package as their module (see actors.channel.lowlevel).
_publish(globals())
