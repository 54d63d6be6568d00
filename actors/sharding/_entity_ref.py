"""``EntityRef``: the ref of one entity, by type and key (Akka's
``EntityRef``, Orleans' grain reference): usable before the entity exists,
wherever it runs, however often it was passivated.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Generic, TypeVar, final, overload

import anyio

from .. import AskTimeout, ReplyTypeMismatch, Request
from ._hash import shard_of
from ._state import Active, Locate, TypeState

__all__ = ["EntityRef"]

M = TypeVar("M")
R = TypeVar("R")


@final
class EntityRef(Generic[M]):
    """The ref of the entity ``key`` of type ``type_name``; get one with
    [``Sharding.entity_ref``][actors.sharding.Sharding.entity_ref].

    Refs of the same type and key compare equal and hash alike. Sending never
    needs the entity to be running: its shard is placed, the entity started,
    and the message delivered, in the order each sender sent its messages
    (per-sender FIFO, as Akka's sharding), also across passivation and
    hand-off. When the entity is running here and nothing of its shard waits
    on the way, a message goes straight to its mailbox.

    Attributes:
        type_name: the entity type.
        key: the entity's key.
        shard: the key's shard.
    """

    __slots__ = (
        "_active",
        "_inflight",
        "_remote",
        "_state",
        "key",
        "shard",
        "type_name",
    )

    def __init__(self, state: TypeState, key: str) -> None:
        self._state = state
        self._inflight = state.inflight
        self._remote = state.remote
        self._active: Active | None = None
        self.type_name = state.entity.type_name
        self.key = key
        self.shard = shard_of(key, state.entity.shards)

    def _running(self) -> Active | None:
        """The entity's fast-path entry, or None (take the slow path)."""
        active = self._active
        if active is None or not active.open:
            active = self._active = self._state.active.get(self.key)
            if active is None:
                return None
        return None if self._inflight[self.shard] else active

    def tell(self, message: M) -> None:
        """Send ``message`` and return at once (never waits).

        Raises:
            BufferFull: ``Entity.buffer`` messages of the entity's shard wait
                already (no home yet, hand-off, passivation); the message is
                a dead letter.
            MailboxFull: the running entity's mailbox is at its capacity,
                or (its shard on another node) this node's share of that
                node's region, or its outbound buffer to that node, is full.
            TypeError: the entity's shard is on another node and the
                message's type is not registered on the codec.
            ShardingError: the ``Sharding`` is not running.
        """
        # The fast paths, written out (a call saved per message): the entry
        # this ref used last while it is still open, else a lookup; or the
        # shard's home on another node.
        shard = self.shard
        active = self._active
        if active is None or not active.open:
            home = self._remote[shard]
            if home is not None and not self._inflight[shard]:
                home.tell(self.key, message)
                return
            active = self._active = self._state.active.get(self.key)
        if active is not None and not self._inflight[shard]:
            active.count += 1
            active.tell(message)
            return
        self._state.send_slow(shard, self.key, message)

    async def send(self, message: M) -> None:
        """Send ``message``, waiting for room in the running entity's mailbox
        (backpressure); a message that must wait for the entity to start
        counts against ``Entity.buffer`` instead (as ``tell``).

        Raises:
            BufferFull, ShardingError: as ``tell``.
            ActorStopped: the entity stopped while the sender waited.
        """
        shard = self.shard
        active = self._active
        if active is None or not active.open:
            home = self._remote[shard]
            while home is not None and not self._inflight[shard]:
                if not home.full():
                    home.tell(self.key, message)
                    return
                await home.room()  # then the paths are looked at again
                home = self._remote[shard]
            active = self._active = self._state.active.get(self.key)
        if active is not None and not self._inflight[shard]:
            active.count += 1
            await active.ref.send(message)
            return
        self._state.send_slow(shard, self.key, message)

    # ask is a plain method returning the coroutine to await: on the fast
    # path the entity's own ActorRef.ask coroutine, so a sharded ask costs no
    # coroutine frame more than a direct one.
    @overload
    def ask(
        self, message: Request[R], timeout: float = 5.0
    ) -> Coroutine[Any, Any, R]: ...

    @overload
    def ask(
        self, message: Request[Any], timeout: float = 5.0
    ) -> Coroutine[Any, Any, ReplyTypeMismatch]: ...

    @overload
    def ask(self, message: M, timeout: float = 5.0) -> Coroutine[Any, Any, Any]: ...

    def ask(self, message: Any, timeout: float = 5.0) -> Coroutine[Any, Any, Any]:
        """Send ``message`` and wait for the entity's reply (``await
        ref.ask(...)``), starting the entity first if it is not running.

        Args:
            message: the request.
            timeout: seconds to wait for the reply, the entity's start
                included (> 0).

        Returns:
            The reply.

        Raises:
            AskTimeout: no reply within ``timeout`` seconds.
            ActorStopped: the entity stopped before replying.
            BufferFull, ShardingError: as ``tell`` (a ``ShardingError`` also
                when the entity's shard was stopped before it was reached).
            TypeError, ValueError: ``timeout`` is not a number > 0.
            Exception: whatever the entity's handler raised.
        """
        active = self._running()
        if active is not None:
            active.count += 1
            return active.ref.ask(message, timeout)  # it checks the timeout
        return self._ask_slowly(message, timeout)

    async def _ask_slowly(self, message: Any, timeout: float) -> Any:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError(f"timeout is a number of seconds, not {timeout!r}")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0, not {timeout}")
        state = self._state
        deadline = anyio.current_time() + timeout
        locate = Locate(anyio.Event(), deadline)
        state.send_slow(self.shard, self.key, locate)
        with anyio.move_on_after(timeout):
            await locate.event.wait()
        if locate.error is not None:
            raise locate.error
        ref = locate.ref
        if ref is None:
            raise AskTimeout(
                f"entity {self.type_name}/{self.key} was not reached within {timeout} s"
            )
        left = deadline - anyio.current_time()
        if left <= 0:
            raise AskTimeout(
                f"entity {self.type_name}/{self.key} did not reply within {timeout} s"
            )
        return await ref.ask(message, left)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is EntityRef
            and other.type_name == self.type_name
            and other.key == self.key
        )

    def __hash__(self) -> int:
        return hash((EntityRef, self.type_name, self.key))

    def __repr__(self) -> str:
        return f"EntityRef({self.type_name!r}, {self.key!r})"
