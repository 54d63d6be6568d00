"""Joining: keeping a member of a pool across processes on each of its
nodes (see ``_pool_coordinator``).

One task per node, for the pool's lifetime: it finds the node's agent
(retrying, with a doubling delay, while the node is not there), asks it to
start a member (``JoinPool``), tells the coordinator the member
[``Joined``][actors.remote.scaleout._pool_joining.Joined], waits until the
member is lost, and joins again (the node restarted). A node that answers
without an agent for longer than a grace, refuses (a class it does not
host, a worker whose constructor fails), or whose process has exited, is
reported in the pool's ``errors`` and not tried again; a member lost soon
after it joined (a crash loop) makes the next join wait, doubling.
"""

from __future__ import annotations

from typing import Any, Protocol

import anyio
import msgspec

from ... import ActorRef, ActorStopped, AskTimeout
from .._errors import ActorNotFound, NodeUnreachable
from ._node import Node
from ._pool_protocol import JoinPool
from ._processes import NodeProcesses
from ._spawn import AGENT_NAME, SpawnReply

__all__ = ["Joined", "Pool", "keep_member"]

#: Seconds between attempts to join a node that is not there (doubling).
_RETRY_FIRST, _RETRY_MAX = 0.05, 0.5
#: Seconds a node that answers may go on lacking a node agent before the pool
#: takes it as a refusal: a node process registers its agent just after it
#: connects, so a lookup right after it joined can come too early.
_AGENT_GRACE = 5.0
#: A member lost within this many seconds of joining failed at once (its
#: workers cannot start, say): joining again waits, doubling up to
#: _CRASH_MAX seconds, so a crash loop neither spins nor floods the logs.
_CRASH_WITHIN, _CRASH_MAX = 5.0, 5.0


class Joined(msgspec.Struct):
    """Local: a member joined (from the task that keeps a node in the pool)."""

    node: str
    ref: Any
    lost: Any


class Pool(Protocol):
    """What joining needs of a pool (``PoolCoordination``; a protocol, so
    this module never imports the one that imports it)."""

    remote: Node
    alive: bool
    join_request: JoinPool | None
    processes: NodeProcesses | None
    ref: ActorRef[Any] | None
    quick_losses: dict[str, int]

    def refused(self, node: str, error: BaseException) -> None:
        """``node`` cannot join."""

    def task_scope(self) -> anyio.CancelScope | None:
        """A new task's cancel scope, or None when the pool has stopped."""


async def keep_member(pool: Pool, node: str) -> None:
    """Keep a member of ``pool`` on ``node`` while the pool lives: join it,
    and again when it is lost (the node restarted)."""
    scope = pool.task_scope()
    if scope is None:
        return
    with scope:
        await _keep(pool, node)


async def _keep(pool: Pool, node: str) -> None:
    remote = pool.remote
    delay = crash_delay = _RETRY_FIRST
    no_agent_since: float | None = None
    while pool.alive:
        try:
            agent = await remote.lookup(node, AGENT_NAME, timeout=2.0)
            answer = await agent.ask(pool.join_request, timeout=10.0)
        except (NodeUnreachable, AskTimeout, ActorStopped):
            # Not there (yet), or its agent is stopping: try again.
            processes = pool.processes
            code = None if processes is None else processes.exit_code(node)
            if code is not None:  # it will never come: say so
                pool.refused(
                    node,
                    RuntimeError(
                        f"node process {node} exited with status {code} "
                        "(its error is on this process's standard error)"
                    ),
                )
                return
            await anyio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX)
            continue
        except ActorNotFound as exc:
            # Reachable, but no agent (yet?): a node process registers it
            # just after connecting; past the grace, a refusal.
            now = anyio.current_time()
            if no_agent_since is None:
                no_agent_since = now
            if now - no_agent_since < _AGENT_GRACE:
                await anyio.sleep(delay)
                delay = min(delay * 2, _RETRY_MAX)
                continue
            answer = exc
        except Exception as exc:
            # The node's refusal raised as an error reply (a worker's
            # constructor failed): never the pool's own failure.
            answer = exc
        if type(answer) is not SpawnReply:
            error = answer if isinstance(answer, BaseException) else None
            pool.refused(node, error or RuntimeError(repr(answer)))
            return
        delay = _RETRY_FIRST
        no_agent_since = None
        lost = anyio.Event()
        assert pool.ref is not None
        pool.ref.tell(Joined(node, answer.ref, lost))
        joined = anyio.current_time()
        await lost.wait()
        if anyio.current_time() - joined < _CRASH_WITHIN:
            pool.quick_losses[node] = pool.quick_losses.get(node, 0) + 1
            await anyio.sleep(crash_delay)
            crash_delay = min(crash_delay * 2, _CRASH_MAX)
        else:
            pool.quick_losses.pop(node, None)
            crash_delay = _RETRY_FIRST
