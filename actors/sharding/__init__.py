"""Cluster sharding: actors addressed by key, activated on demand, passivated
when idle, with one owner at a time (Akka Cluster Sharding's guarantees,
Orleans' feel: an entity ref works before its entity exists).

Register [``Entity``][actors.sharding.Entity] types; the key of an entity is
hashed ([``shard_of``][actors.sharding.shard_of]) to one of its type's shards;
an [``AllocationStrategy``][actors.sharding.AllocationStrategy] (by default
[``LeastShardAllocation``][actors.sharding.LeastShardAllocation]) decides
which node hosts a shard. Leases, members and remembered entities live in a
[``PlacementStore``][actors.sharding.PlacementStore]: a JetStream KV bucket
([``KeyValuePlacementStore``][actors.sharding.KeyValuePlacementStore]) or,
in one process, [``MemoryPlacementStore``][actors.sharding.MemoryPlacementStore].
"""

from ._allocation import AllocationStrategy as AllocationStrategy
from ._allocation import LeastShardAllocation as LeastShardAllocation
from ._cluster import Cluster as Cluster
from ._entity import Entity as Entity
from ._entity_ref import EntityRef as EntityRef
from ._errors import BufferFull as BufferFull
from ._errors import PlacementConflict as PlacementConflict
from ._errors import PlacementUnavailable as PlacementUnavailable
from ._errors import ShardingError as ShardingError
from ._errors import UnknownEntityType as UnknownEntityType
from ._hash import shard_of as shard_of
from ._kv_store import KeyValuePlacementStore as KeyValuePlacementStore
from ._lease import LeaseEvent as LeaseEvent
from ._membership import Member as Member
from ._membership import MemberDown as MemberDown
from ._membership import MemberEvent as MemberEvent
from ._membership import MemberExited as MemberExited
from ._membership import MemberJoined as MemberJoined
from ._membership import MemberLeft as MemberLeft
from ._membership import MemberRemoved as MemberRemoved
from ._membership import MemberUp as MemberUp
from ._memory_store import MemoryPlacementStore as MemoryPlacementStore
from ._sharding import Sharding as Sharding
from ._sharding import ShardingStatistics as ShardingStatistics
from ._store import PlacementEntry as PlacementEntry
from ._store import PlacementStore as PlacementStore

__all__ = [
    "AllocationStrategy",
    "BufferFull",
    "Cluster",
    "Entity",
    "EntityRef",
    "KeyValuePlacementStore",
    "LeaseEvent",
    "LeastShardAllocation",
    "Member",
    "MemberDown",
    "MemberEvent",
    "MemberExited",
    "MemberJoined",
    "MemberLeft",
    "MemberRemoved",
    "MemberUp",
    "MemoryPlacementStore",
    "PlacementEntry",
    "PlacementStore",
    "PlacementConflict",
    "PlacementUnavailable",
    "Sharding",
    "ShardingError",
    "ShardingStatistics",
    "UnknownEntityType",
    "shard_of",
]

# Public names report this package as their module (see actors.channel.lowlevel).
from ..channel.lowlevel import publish as _publish

_publish(globals())
