"""``Shard``: the actor hosting one shard's entities on one node (Akka's
``Shard``): it starts an entity on its first message, passivates it when
idle (holding what arrives meanwhile, then starting it again), remembers
entities, and hands its entities off (their queued messages handled first)
before its region gives the shard's lease back.

Its entities are its children: it is their supervisor (restarts on failure
call the entity type's factory again). Each entity fails alone, as under
Akka's shard (whose default strategy restarts a child without limit): a
failing entity is restarted however often it fails, its consecutive restarts
spaced by a backoff of its own, and its failures never fail the shard, so
they never stop its other entities. A factory that refuses a key (raises)
fails the message that would have started it: an ask raises the factory's
exception, a tell is a dead letter (reason ``"entity factory failed"``).
"""

from __future__ import annotations

import base64
import sys
from collections import deque
from collections.abc import Sequence
from typing import Any, Final, final
from urllib.parse import quote

import anyio

from .. import Actor, ActorRef, Backoff, DeadLetter, OneForOne, Result, Terminated
from ._guard import guard
from ._state import Active, Deliver, Locate, ShardState, TypeState
from ._store import PlacementStore

__all__ = ["HandOff", "HandedOff", "Shard", "remember_key", "remembered_prefix"]

_PASSIVATE: Final = "passivate-check"
#: Checks of a handed-off entity's mailbox (no stop_message) made at each
#: scheduling round before waiting _DRAIN_POLL seconds between checks: an
#: entity draining its queue empties it within a few rounds (drain-many).
_DRAIN_SPINS: Final = 1000
_DRAIN_POLL: Final = 0.001


def remembered_prefix(type_name: str, shard: int | None = None) -> str:
    """The store prefix of the remembered entities of a type (of a shard)."""
    if shard is None:
        return f"entities/{type_name}/"
    return f"entities/{type_name}/{shard}/"


def remember_key(type_name: str, shard: int, key: str) -> str:
    """The store key remembering ``key`` (base64url: any key fits a KV key)."""
    encoded = base64.urlsafe_b64encode(key.encode("utf-8", "surrogatepass")).decode()
    return f"{remembered_prefix(type_name, shard)}{encoded}"


def _decoded(store_key: str) -> str:
    return base64.urlsafe_b64decode(store_key.rpartition("/")[2]).decode(
        "utf-8", "surrogatepass"
    )


def _name(key: str) -> str:
    """An actor name for an entity key (no ``/``, no control characters)."""
    name = quote(key, safe="")
    return name.replace(".", "%2E") if name in (".", "..") else name


@final
class HandOff:
    """Region -> shard: stop the entities (after their queued messages) and
    answer with ``HandedOff``."""

    __slots__ = ()


@final
class HandedOff:
    """Shard -> region: every entity has stopped; ``leftovers`` are the
    messages the shard held for passivating entities, oldest first."""

    __slots__ = ("leftovers", "shard")

    def __init__(self, shard: int, leftovers: list[Deliver]) -> None:
        self.shard = shard
        self.leftovers = leftovers


@final
class _Remembered:
    __slots__ = ("keys",)

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys


@final
class _DrainCheck:
    __slots__ = ()


class Shard(Actor[Any]):
    """The entities of one shard on one node (see the module docstring)."""

    #: Restart a failed entity alone, without limit (never escalate: one
    #: entity's failures must not stop the shard's others), each entity's
    #: consecutive restarts spaced from 10 ms up to 1 s.
    supervisor_strategy = OneForOne(
        max_restarts=sys.maxsize,
        within=1.0,
        backoff=Backoff(min_delay=0.01, max_delay=1.0),
    )

    def __init__(
        self,
        types: TypeState,
        state: ShardState,
        region: ActorRef[Any],
        remember: PlacementStore | None,
    ) -> None:
        self.types = types
        self.state = state
        self.region = region
        self.remember = remember
        self.entity = types.entity
        #: the entity type's factory, its entities guarded by the lease
        self.factory = guard(self.entity.factory, types, types.leases, state.shard)
        self.by_ref: dict[ActorRef[Any], str] = {}
        #: key -> messages held while the entity passivates
        self.passivating: dict[str, deque[object]] = {}
        #: key -> (message count, when it was last seen to change)
        self.seen: dict[str, tuple[int, float]] = {}
        self.handing_off = False
        self.draining: set[ActorRef[Any]] = set()

    def on_start(self) -> None:
        # A restarted shard (a failure of its own) has lost its entities: the
        # failed incarnation's children were stopped with it. Forget them, so
        # their keys start afresh instead of reaching stopped refs.
        entities = self.state.entities
        for key, active in entities.items():
            self.types.retire(key, active)
        entities.clear()
        idle = self.entity.passivate_after
        if idle is not None:
            self.context.timers.start_periodic(_PASSIVATE, _PASSIVATE, idle / 2)
        store = self.remember
        if store is not None and self.entity.remember:
            prefix = remembered_prefix(self.entity.type_name, self.state.shard)

            async def recall() -> _Remembered:
                return _Remembered([_decoded(e.key) for e in await store.list(prefix)])

            self.context.run(recall)

    def receive(self, message: Any) -> Any:
        if type(message) is Deliver:
            self._deliver(message)
        elif type(message) is Terminated:
            self._terminated(message.ref)
        elif message == _PASSIVATE:
            self._passivate_idle()
        elif type(message) is HandOff:
            self._hand_off()
        elif type(message) is _DrainCheck:
            self._drain()
        elif type(message) is Result:
            self._remembered(message)
        else:
            raise TypeError(f"a shard got {message!r}")

    # -- delivering ---------------------------------------------------------

    def _deliver(self, message: Deliver) -> None:
        state = self.state
        if state.fenced:  # its lease is given up: deliver nothing more
            self.types.drop(message.message, "shard lease given up")
            return
        state.handled += 1
        key = message.key
        active = state.entities.get(key)
        if active is None:
            held = self.passivating.get(key)
            if held is not None:
                held.append(message.message)  # still in flight
                return
            active = self._start_or_refuse(key, (message.message,))
            if active is None:
                return
        self._give(active, message.message)

    def _give(self, active: Active, message: object) -> None:
        self.types.delivered(self.state.shard)
        active.count += 1
        if isinstance(message, Locate):
            message.resolve(active.ref)
        else:
            active.ref.tell(message)

    def _start_or_refuse(self, key: str, messages: Sequence[object]) -> Active | None:
        """Start ``key``'s entity; when its factory raises, fail ``messages``
        (slow-path messages for it) with that exception and return None."""
        try:
            return self._start(key)
        except Exception as exc:
            types = self.types
            for message in messages:
                types.delivered(self.state.shard)
                types.dropped += 1
                if isinstance(message, Locate):
                    message.fail(exc)  # the asker raises it, as spawn would
                elif types.region is not None:
                    types.system.dead_letters.publish(
                        DeadLetter(types.region, message, "entity factory failed")
                    )
            return None

    def _start(self, key: str) -> Active:
        types = self.types
        ref = self.context.spawn(self.factory, key, name=_name(key))
        self.context.watch(ref)
        active = Active(ref, self.state.shard)
        self.state.entities[key] = active
        types.active[key] = active
        self.by_ref[ref] = key
        self.seen[key] = (0, types.now())
        types.activations += 1
        store = self.remember
        if store is not None and self.entity.remember:
            entry = remember_key(self.entity.type_name, self.state.shard, key)

            async def remember() -> None:
                if await store.get(entry) is None:
                    await store.create(entry, b"")

            self.context.run(remember)
        return active

    def _remembered(self, result: Result[Any]) -> None:
        if not result.ok:
            return  # a remember write failed: the entity runs, unremembered
        value = result.value
        if type(value) is _Remembered and not self.handing_off:
            for key in value.keys:
                if key not in self.state.entities and key not in self.passivating:
                    self._start_or_refuse(key, ())

    # -- passivation --------------------------------------------------------

    def _passivate_idle(self) -> None:
        idle = self.entity.passivate_after
        if idle is None or self.handing_off:
            return
        now = self.types.now()
        for key, active in list(self.state.entities.items()):
            count, since = self.seen.get(key, (-1, now))
            if count != active.count:
                self.seen[key] = (active.count, now)
            elif now - since >= idle and active.ref.statistics().queued_messages == 0:
                self._passivate(key, active)

    def _passivate(self, key: str, active: Active) -> None:
        types = self.types
        del self.state.entities[key]
        types.retire(key, active)
        self.passivating[key] = deque()
        types.passivations += 1
        self._stop_entity(active.ref)

    def _stop_entity(self, ref: ActorRef[Any]) -> None:
        stop = self.entity.stop_message
        if stop is None:
            ref.stop()
        else:
            ref.tell(stop)  # the entity stops itself after what is queued

    def _terminated(self, ref: ActorRef[Any]) -> None:
        key = self.by_ref.pop(ref, None)
        if key is None:
            return
        self.seen.pop(key, None)
        self.draining.discard(ref)
        held = self.passivating.get(key)
        if held is not None:
            if held and not self.handing_off:
                del self.passivating[key]
                active = self._start_or_refuse(key, held)
                while held and active is not None:
                    self._give(active, held.popleft())
            elif not held:
                del self.passivating[key]
        else:
            # It stopped itself, or failed for good: it is not remembered.
            gone = self.state.entities.pop(key, None)
            if gone is not None:
                self.types.retire(key, gone)
            store = self.remember
            if store is not None and self.entity.remember and not self.handing_off:
                entry = remember_key(self.entity.type_name, self.state.shard, key)
                self.context.run(lambda: store.delete(entry))
        if self.handing_off:
            self._finish_if_done()

    # -- hand-off -----------------------------------------------------------

    def _hand_off(self) -> None:
        self.handing_off = True
        self.context.timers.cancel(_PASSIVATE)
        types = self.types
        for key, active in self.state.entities.items():
            types.retire(key, active)
            if (
                self.entity.stop_message is None
                and active.ref.statistics().queued_messages
            ):
                self.draining.add(active.ref)
            else:
                self._stop_entity(active.ref)
        self.state.entities.clear()
        if self.draining:
            self._poll_drain()
        self._finish_if_done()

    def _poll_drain(self) -> None:
        draining = self.draining

        async def later() -> _DrainCheck:
            for _ in range(_DRAIN_SPINS):
                await anyio.lowlevel.checkpoint()
                if all(r.statistics().queued_messages == 0 for r in draining):
                    return _DrainCheck()
            await anyio.sleep(_DRAIN_POLL)
            return _DrainCheck()

        self.context.run(later, then=lambda result: result.value)

    def _drain(self) -> None:
        for ref in list(self.draining):
            if not ref.is_alive or ref.statistics().queued_messages == 0:
                self.draining.discard(ref)
                ref.stop()
        if self.draining:
            self._poll_drain()

    def _finish_if_done(self) -> None:
        if self.by_ref:
            return  # entities still stopping
        leftovers: list[Deliver] = []
        shard = self.state.shard
        for key, held in self.passivating.items():
            leftovers.extend(Deliver(shard, key, message) for message in held)
        self.passivating.clear()
        self.state.fenced = True
        self.region.tell(HandedOff(shard, leftovers))
        self.context.stop()
