"""What one node knows about one entity type, shared by the type's
``EntityRef``s (read synchronously on every message), its region and its
shards (which change it), all in the event loop's thread.

The fast path: an ``EntityRef`` whose entity is active here, and whose shard
has no message of ours still on its way through the region (``inflight``),
hands its message straight to the entity's mailbox. The remote fast path:
one whose shard is homed on another node, where this node's region would
send the message at once (``remote``: the region opens and closes it), and
with nothing of the shard in flight here, sends it straight to that node's
region, behind everything this node sent there before. Any other message takes
the slow path (region, then shard) and counts in ``inflight`` until it is in
the entity's mailbox or dropped as a dead letter, so a later message of the
same sender never overtakes it: per-sender order holds across activation,
passivation and hand-off. ``inflight`` is also the bound on what waits: at
``Entity.buffer`` messages for one shard, ``tell`` raises ``BufferFull``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, final

from .. import ActorRef, DeadLetter
from ._entity import Entity
from ._errors import BufferFull, ShardingError

if TYPE_CHECKING:
    from .. import ActorSystem

__all__ = ["Active", "Deliver", "Locate", "ShardState", "TypeState"]


@final
class Active:
    """An entity running on this node: its ref and the messages it was given
    (the shard's passivation check reads the count); ``open`` while it is on
    the fast path (an ``EntityRef`` keeps the last one it used and checks
    this instead of looking the key up again)."""

    __slots__ = ("count", "open", "ref", "shard", "tell")

    def __init__(self, ref: ActorRef[Any], shard: int) -> None:
        self.ref = ref
        self.shard = shard
        self.tell = ref.tell  # bound once: one attribute load per message less
        self.count = 0
        self.open = True


class Locate:
    """The slow path of an ask: resolved with the entity's ref once every
    message sent before it is in the entity's mailbox (the asker then asks the
    entity itself), or with the error that stopped it. ``deadline``: when its
    asker gives up (on the event loop's clock). A peer node's ask being
    located here is a subclass that answers over the wire."""

    __slots__ = ("deadline", "error", "event", "ref")

    def __init__(self, event: Any, deadline: float = math.inf) -> None:
        self.event = event
        self.deadline = deadline
        self.ref: ActorRef[Any] | None = None
        self.error: BaseException | None = None

    def resolve(self, ref: ActorRef[Any]) -> None:
        self.ref = ref
        self.event.set()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.event.set()


@final
class Deliver:
    """A message on the slow path: for ``key`` of ``shard``."""

    __slots__ = ("key", "message", "shard")

    def __init__(self, shard: int, key: str, message: object) -> None:
        self.shard = shard
        self.key = key
        self.message = message

    def __repr__(self) -> str:
        return f"Deliver({self.shard}, {self.key!r}, {self.message!r})"


@final
class ShardState:
    """One shard hosted here: its entities, and whether it was fenced (its
    lease given up: it delivers nothing more)."""

    __slots__ = ("entities", "fenced", "forwarded", "handled", "shard")

    def __init__(self, shard: int) -> None:
        self.shard = shard
        #: key -> Active, the shard's running entities
        self.entities: dict[str, Active] = {}
        self.fenced = False
        #: Deliver messages the region forwarded to the shard, and those the
        #: shard has taken: the difference is what waits in its mailbox.
        self.forwarded = 0
        self.handled = 0


_NOT_RUNNING: Final = "sharding is not running (use async with Sharding(...))"


@final
class TypeState:
    """One entity type on one node (see the module docstring)."""

    __slots__ = (
        "__weakref__",  # the telemetry's observers hold the states weakly
        "activations",
        "active",
        "dropped",
        "entity",
        "hand_offs",
        "hosted",
        "inflight",
        "leases",
        "node",
        "now",
        "on_downed",
        "passivations",
        "region",
        "remote",
        "system",
    )

    def __init__(
        self,
        entity: Entity[Any],
        node: str,
        system: ActorSystem,
        now: Callable[[], float],
    ) -> None:
        self.entity = entity
        self.node = node
        self.system = system
        self.now = now
        #: key -> Active, every entity of this type running here
        self.active: dict[str, Active] = {}
        #: per shard: slow-path messages not yet in an entity's mailbox
        self.inflight = [0] * entity.shards
        #: per shard: its home on another node while this node's region
        #: sends its messages straight there (a ``_link.PeerLink``: the
        #: remote fast path), else None
        self.remote: list[Any] = [None] * entity.shards
        #: shard -> ShardState, the shards hosted here
        self.hosted: dict[int, ShardState] = {}
        self.region: ActorRef[Any] | None = None
        #: this node's leases of the type's shards (the entities' guard)
        self.leases: Any = None
        self.activations = 0
        self.passivations = 0
        self.hand_offs = 0
        self.dropped = 0
        #: called when a peer declared this node down (its Cluster's)
        self.on_downed: Callable[[], None] | None = None

    def send_slow(self, shard: int, key: str, message: object) -> None:
        """Put a message on the slow path (see the module docstring).

        Raises:
            BufferFull: ``Entity.buffer`` messages of the shard wait already
                (the message is a dead letter).
            ShardingError: sharding is not running.
        """
        region = self.region
        if region is None:
            raise ShardingError(_NOT_RUNNING)
        inflight = self.inflight
        if inflight[shard] >= self.entity.buffer:
            self.drop(message, "sharding buffer full")
            raise BufferFull(
                f"{self.entity.buffer} messages for shard {shard} of entity type "
                f"{self.entity.type_name!r} wait already (key {key!r}): the "
                "message is a dead letter"
            )
        inflight[shard] += 1
        region.tell(Deliver(shard, key, message))

    def drop(self, message: object, reason: str) -> None:
        """Count ``message`` as dropped and publish it as a dead letter."""
        self.dropped += 1
        region = self.region
        if isinstance(message, Locate):
            message.fail(ShardingError(f"the entity could not be reached: {reason}"))
        elif region is not None:
            self.system.dead_letters.publish(DeadLetter(region, message, reason))

    def delivered(self, shard: int) -> None:
        """One slow-path message of ``shard`` reached its entity (or was
        dropped)."""
        self.inflight[shard] -= 1

    def retire(self, key: str, entry: Active) -> None:
        """Take ``entry`` off the fast path (passivation, hand-off, fence, its
        end)."""
        entry.open = False
        if self.active.get(key) is entry:
            del self.active[key]

    def fence(self, shard: int) -> ShardState | None:
        """Stop delivering to ``shard`` at once: its entities leave the fast
        path and are asked to stop (after the message each is handling), and
        the messages still waiting in the shard's mailbox stop counting as in
        flight (the fenced shard drops them as dead letters).

        Returns:
            The shard's state, or None if it was not hosted.
        """
        state = self.hosted.pop(shard, None)
        if state is None:
            return None
        state.fenced = True
        for key, entry in state.entities.items():
            self.retire(key, entry)
            entry.ref.stop()
        state.entities.clear()
        self.inflight[shard] -= state.forwarded - state.handled
        return state
