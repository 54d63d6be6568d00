"""The messages of a pool across processes, between its coordinator (in the
process that spawned the pool) and its members (one per node).

Credits: a member joins with a window of ``workers * prefetch`` jobs; the
coordinator never has more of its jobs in flight than that. Each ``Done``
gives the credits of the jobs it reports back, so a member pulls new work
exactly as fast as its workers finish: a slow node is not flooded and a fast
one is not starved.

Job bodies are encoded once, when the pool is told (so an unencodable message
fails at the call), and travel inlined (``msgspec.Raw``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ... import ActorRef

__all__ = [
    "DONE",
    "FAILED",
    "MAX_PREFETCH",
    "MAX_WORKERS",
    "REPLIED",
    "Broadcast",
    "Check",
    "Done",
    "Leave",
    "Holding",
    "JoinPool",
    "Jobs",
    "MemberFailed",
    "Returned",
    "protocol_classes",
]

#: Outcome kinds in ``Done``: finished (a tell), replied, failed.
DONE, REPLIED, FAILED = 0, 1, 2

#: The most workers per node and jobs per worker a node's agent accepts.
MAX_WORKERS, MAX_PREFETCH = 4096, 65536


class JoinPool(msgspec.Struct, frozen=True, array_like=True):
    """To a node's agent: start a member of the pool ``coordinator`` with
    ``workers`` workers of ``target`` (args as tagged values)."""

    coordinator: ActorRef[Any]
    pool: str
    target: str
    args: list[tuple[str, msgspec.Raw]]
    kwargs: dict[str, tuple[str, msgspec.Raw]]
    workers: int
    prefetch: int
    capacity: int | None = None


class Jobs(msgspec.Struct, frozen=True, array_like=True):
    """To a member: jobs as ``(job_id, wants_reply, tag, body)``."""

    items: list[tuple[int, bool, str, msgspec.Raw]]


class Done(msgspec.Struct, frozen=True, array_like=True):
    """To the coordinator: jobs ``member`` finished, as
    ``(job_id, kind, tag, body)`` (kind ``DONE``, ``REPLIED`` or
    ``FAILED``; tag and body empty for ``DONE``). Gives back one
    credit per job."""

    member: ActorRef[Any]
    items: list[tuple[int, int, str, msgspec.Raw]]


class Returned(msgspec.Struct, frozen=True, array_like=True):
    """To the coordinator: jobs ``member`` hands back unstarted (it is
    leaving): dispatch them to other members."""

    member: ActorRef[Any]
    job_ids: list[int]


class Broadcast(msgspec.Struct, frozen=True, array_like=True):
    """To a member: tell every one of its workers this message."""

    tag: str
    body: msgspec.Raw


class Check(msgspec.Struct, frozen=True, array_like=True):
    """To a member: answer ``Holding`` (the coordinator's periodic
    check for jobs or reports lost on the wire). ``upto``: the number of
    Jobs messages the coordinator had sent the member before this one."""

    upto: int


class Holding(msgspec.Struct, frozen=True, array_like=True):
    """To the coordinator: the jobs ``member`` holds (queued, running, or
    finished and not yet reported), answering ``Check`` ``upto``. A job
    sent before the check that it does not hold was lost (or its report
    was): the coordinator dispatches it again."""

    member: ActorRef[Any]
    upto: int
    job_ids: list[int]


class Leave(msgspec.Struct, frozen=True, array_like=True):
    """To a member (from its node's agent): hand back unstarted jobs, finish
    the running ones within ``grace`` seconds, report them, and stop."""

    grace: float


class MemberFailed(msgspec.Struct, frozen=True, array_like=True):
    """To the coordinator (from the node's agent, which watches its pools'
    members): ``member`` on node ``node`` stopped after a failure,
    ``error`` (its text, at most 500 characters). A member whose workers
    cannot start dies before the coordinator's watch reaches it (the watch
    then finds no actor and cannot tell why), so its agent says why."""

    member: ActorRef[Any]
    node: str
    error: str


def protocol_classes() -> tuple[type, ...]:
    """The classes to register on both sides (see ``register_protocol``)."""
    return (
        JoinPool,
        Jobs,
        Done,
        Returned,
        Broadcast,
        Check,
        Holding,
        Leave,
        MemberFailed,
    )
