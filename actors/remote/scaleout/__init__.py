"""Scale-out: remote spawn, node processes, and pools across processes.

The pieces, each one concept: ``_hosting`` (the classes a node hosts, the
modules they come from), ``_spawn`` (``system.remote.spawn`` and its
messages), ``_agent`` (a node's agent: it spawns what others ask for, and the
members of pools), ``_pool_protocol`` (the messages between a pool's
coordinator and its members: credits), ``_pool_coordinator`` (the pool's
state and its coordinator actor), ``_pool_joining`` (keeping a member on
each of its nodes), ``_pool_ref``
([``RemotePoolRef``][actors.remote.RemotePoolRef], the users' side),
``_pool_spawn`` (``system.remote.spawn_pool``), ``_processes`` (node
processes on this machine, ``python -m actors.node``) and ``_handoff`` (how
those get their connection options and secret, off their command lines).
``_node`` says what they need of a node (``actors.remote.Remote``), which
they never import.

This face is for ``actors.remote`` and ``actors.node``; users reach the
same through ``system.remote.spawn``, ``system.remote.spawn_pool``,
``actors.node.host`` and ``python -m actors.node``.
"""

from .._secret import check_secret as check_secret
from ._agent import start_agent as start_agent
from ._handoff import Handoff as Handoff
from ._handoff import read_handoff as read_handoff
from ._hosting import Hosted as Hosted
from ._hosting import load_module as load_module
from ._pool_protocol import Leave as Leave
from ._pool_ref import RemotePoolRef as RemotePoolRef
from ._pool_spawn import spawn_remote_pool as spawn_remote_pool
from ._processes import NodeProcesses as NodeProcesses
from ._spawn import AGENT_NAME as AGENT_NAME
from ._spawn import check_spawn_options as check_spawn_options
from ._spawn import remote_spawn as remote_spawn

__all__ = [
    "AGENT_NAME",
    "Handoff",
    "Hosted",
    "Leave",
    "NodeProcesses",
    "RemotePoolRef",
    "check_secret",
    "check_spawn_options",
    "load_module",
    "remote_spawn",
    "read_handoff",
    "spawn_remote_pool",
    "start_agent",
]
