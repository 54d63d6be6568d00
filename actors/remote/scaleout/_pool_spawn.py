"""Spawning a pool across processes: checking the arguments, starting the
node processes (``processes=N``), the coordinator actor."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ... import Actor
from .._errors import FrameTooLarge
from .._node import check_token
from ._handoff import Handoff
from ._hosting import (
    module_name_of,
    module_spec_of,
    register_module_types,
    target_of,
)
from ._node import Node
from ._pool_coordinator import Coordinator, PoolCoordination, Spec
from ._pool_protocol import MAX_PREFETCH, MAX_WORKERS, protocol_classes
from ._pool_ref import RemotePoolRef
from ._processes import NodeProcesses
from ._spawn import encode_args, register_protocol

if TYPE_CHECKING:
    from ... import ActorSystem

__all__ = ["spawn_remote_pool"]


def check_name_free(system: ActorSystem, name: str) -> None:
    """Raise ``ValueError`` when a top-level actor is called ``name``."""
    try:
        system.lookup(f"/user/{name}")
    except LookupError:
        return  # free (a bad name is refused by the spawn, naming it)
    except (TypeError, ValueError):
        return
    raise ValueError(f"/user already has a child named {name!r}")


def spawn_remote_pool(
    remote: Node,
    factory: type[Actor] | str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    nodes: Sequence[str] | None,
    processes: int | None,
    workers: int,
    prefetch: int,
    capacity: int | None,
    worker_capacity: int | None,
    name: str | None,
    grace: float,
    check_interval: float = 5.0,
) -> RemotePoolRef[Any]:
    """See [``Remote.spawn_pool``][actors.remote.Remote.spawn_pool]."""
    for option, value, most in (
        ("workers", workers, MAX_WORKERS),
        ("prefetch", prefetch, MAX_PREFETCH),
    ):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{option} must be an int, not {value!r}")
        if not 1 <= value <= most:
            raise ValueError(f"{option} must be within 1..{most}, not {value}")
    for option, limit in (("capacity", capacity), ("worker_capacity", worker_capacity)):
        if limit is None:
            continue
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"{option} must be an int or None, not {limit!r}")
        if limit < 1:
            raise ValueError(f"{option} must be at least 1, not {limit}")
    if worker_capacity is not None and worker_capacity < prefetch:
        raise ValueError(
            f"worker_capacity ({worker_capacity}) must be at least prefetch "
            f"({prefetch}): a worker is handed up to prefetch jobs at once"
        )
    if (nodes is None) == (processes is None):
        raise ValueError("give either nodes (node names) or processes (a count)")
    if processes is not None:
        if isinstance(processes, bool) or not isinstance(processes, int):
            raise TypeError(f"processes must be an int, not {processes!r}")
        if processes < 1:
            raise ValueError(f"processes must be at least 1, not {processes}")
    if nodes is not None:
        if isinstance(nodes, str) or not isinstance(nodes, Iterable):
            raise TypeError(f"nodes must be a list of node names, not {nodes!r}")
        nodes = [check_token("node", node) for node in nodes]
        if not nodes:
            raise ValueError("nodes must name at least one node")
        twice = sorted({node for node in nodes if nodes.count(node) > 1})
        if twice:
            raise ValueError(f"nodes must name each node once, not {twice[0]!r} twice")
    address = remote.node  # raises SystemNotRunning
    host = remote.host
    target, module = target_of(factory)
    codec = remote.codec
    register_protocol(codec, *protocol_classes())
    if module is not None:
        register_module_types(codec, module, module_name_of(module))
    encoded_args, encoded_kwargs = encode_args(codec, args, kwargs)
    limit = remote.max_payload - 4096
    size = sum(len(body) for _, body in [*encoded_args, *encoded_kwargs.values()])
    if size > limit:
        raise FrameTooLarge(
            f"the workers' arguments take {size} bytes: they do not fit the "
            f"message that starts a member (at most {limit})"
        )
    if name is None:
        base = target.rpartition(":")[2].lower()
        name = f"pool-{base}-{secrets.token_hex(3)}"
    started: NodeProcesses | None = None
    if processes is not None:
        # Checked before any process starts (a TLS context cannot be handed).
        servers, client_options = remote.connect_options
        handoff = Handoff(
            servers, client_options, remote.secret_keys, remote.node_options
        )
        # Before any process starts (their node names come from the pool's).
        check_name_free(host.system, name)
        spec = (
            module_spec_of(module) if module is not None else target.partition(":")[0]
        )
        base = re.sub(r"[^A-Za-z0-9_-]", "-", f"{address.node}-{name}")[:58]
        nodes = [f"{base}-{i}" for i in range(processes)]
        started = NodeProcesses(
            handoff,
            system=remote.system_name,
            prefix=remote.prefix,
            names=nodes,
            modules=[spec],
            grace=grace,
        )
    assert nodes is not None
    try:
        state = PoolCoordination(
            remote,
            Spec(
                name,
                target,
                encoded_args,
                encoded_kwargs,
                workers,
                prefetch,
                worker_capacity,
            ),
            nodes,
            capacity,
            started,
            check_interval,
        )
        state.ref = host.system.spawn(Coordinator, state, name=name)
    except BaseException:
        if started is not None:
            started.kill()
        raise
    return RemotePoolRef(state)
