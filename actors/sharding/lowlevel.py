"""The parts sharding is built of, for a new placement store's tests and for
tools: the shard leases one node holds
([``Leases``][actors.sharding.lowlevel.Leases]), the key of a lease, and the
key of the mark that a node was declared down."""

from ._coordinator import down_key as down_key
from ._lease import Leases as Leases
from ._lease import lease_key as lease_key

__all__ = ["Leases", "down_key", "lease_key"]

# Public names report this package as their module (see actors.channel.lowlevel).
from ..channel.lowlevel import publish as _publish

_publish(globals())
