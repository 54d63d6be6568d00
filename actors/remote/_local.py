"""This node's own actors as the network sees them: found by path or by a
registered name, messages from peers delivered to them, and the dead letters
the remote layer makes.

A path (``/user/a/b``) is looked up in the system's actor tree; anything else
is a name given with [``Remote.register``][actors.remote.Remote.register].
Refs cross the wire as [``RefAddress``][actors.remote.RefAddress]es: the
codec asks ``address_of`` for each ref it encodes and ``resolve`` for each
address it decodes (a local ref for this node's actors, a remote ref for
the others').

The runtime's own actors never obey a stop from the network, whatever the
mode (``is_protected``): the guardians (``/user``, ``/system``), everything
under ``/system``, and the actors marked with ``protect`` (the node agent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ActorRef, ActorStopped, MailboxFull
from ..extension import RemoteHost
from ._node import NodeAddress, RefAddress
from ._ref import RemoteRef

__all__ = ["Local"]

#: The most characters of a registered name.
MAX_NAME = 1024


class Local:
    """The local side of one node (see the module doc).

    Args:
        host: the system the node joined.
        address: this node's incarnation.
        remote_ref: makes the remote ref of an address of another node.
    """

    __slots__ = (
        "_host",
        "_names",
        "_protected",
        "_remote_ref",
        "address",
        "dead_letters_by_peer",
    )

    def __init__(
        self,
        host: RemoteHost,
        address: NodeAddress,
        remote_ref: Callable[[RefAddress], RemoteRef[Any]],
    ) -> None:
        self._host = host
        self.address = address
        self._remote_ref = remote_ref
        self._names: dict[str, ActorRef[Any]] = {}
        self._protected: set[ActorRef[Any]] = set()
        #: Dead letters the remote layer made, by (peer node name, reason).
        self.dead_letters_by_peer: dict[tuple[str, str], int] = {}

    # -- names -----------------------------------------------------------------

    def register(self, name: str, ref: ActorRef[Any]) -> None:
        """See [``Remote.register``][actors.remote.Remote.register]."""
        if type(name) is not str:
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not 0 < len(name) <= MAX_NAME or name.startswith("/"):
            raise ValueError(
                f"name must be 1 to {MAX_NAME} characters and not begin with "
                f"'/', not {name!r}"
            )
        if not isinstance(ref, ActorRef) or self._host.path_of(ref) is None:
            raise TypeError(
                f"ref must be a ref to an actor of this system, not {ref!r}"
            )
        known = self._names.get(name)
        if known is not None and known != ref and known.is_alive:
            raise ValueError(f"the name {name!r} is registered already for {known!r}")
        self._names[name] = ref

    def unregister(self, name: str) -> None:
        """Forget a registered name (nothing if unknown)."""
        self._names.pop(name, None)

    def find(self, path: str) -> ActorRef[Any] | None:
        """The live local actor at ``path`` (or registered as ``path``)."""
        if path.startswith("/"):
            return self._host.find(path)
        ref = self._names.get(path)
        return ref if ref is not None and ref.is_alive else None

    def protect(self, ref: ActorRef[Any]) -> None:
        """Refuse stops of the local actor ``ref`` from the network (an actor
        of the runtime's, such as the node agent)."""
        self._protected.add(ref)

    def is_protected(self, ref: ActorRef[Any]) -> bool:
        """Whether a stop of ``ref`` from the network is refused: a guardian,
        an actor under ``/system``, or one marked with ``protect``."""
        if ref in self._protected:
            return True
        path = self._host.path_of(ref)
        # /user/<name>... are the users' actors; /user, /system and
        # /system/... the runtime's.
        return path is None or not path.startswith("/user/")

    # -- refs <-> addresses (the codec's hooks) --------------------------------

    def address_of(self, obj: object) -> RefAddress | None:
        """The address of a ref (a local actor's, or a remote ref's), or
        None for anything else."""
        if isinstance(obj, RemoteRef):
            return obj.address
        if isinstance(obj, ActorRef):
            path = self._host.path_of(obj)
            if path is not None:
                address = self.address
                return RefAddress(address.node, address.incarnation, path)
        return None

    def resolve(self, address: RefAddress) -> object:
        """The ref an address decodes to: the local actor's when it lives
        here (and is alive), else a remote ref."""
        own = self.address
        if address.incarnation == own.incarnation and address.node == own.node:
            ref = self.find(address.path)
            if ref is not None:
                return ref
        return self._remote_ref(address)

    def here(self, path: str) -> RemoteRef[Any]:
        """A remote ref naming ``path`` on this node (the recipient of a dead
        letter for an actor that is not here)."""
        own = self.address
        return self._remote_ref(RefAddress(own.node, own.incarnation, path))

    # -- messages from peers ---------------------------------------------------

    def deliver(self, path: str, message: object, sender: object) -> None:
        """Tell the local actor at ``path`` a message from ``sender``; a
        missing actor, a full mailbox or a stopped actor makes a dead letter
        (counted per peer)."""
        ref = self.find(path)
        if ref is None:
            self.dead_letter(self.here(path), message, "actor not found", sender)
            return
        try:
            ref.tell(message)
        except MailboxFull:
            self.dead_letter(ref, message, "mailbox full", sender)
        except ActorStopped:
            self.dead_letter(ref, message, "actor stopped", sender)

    def dead_letter(
        self, recipient: ActorRef[Any], message: object, reason: str, peer: object
    ) -> None:
        """A dead letter made by the remote layer, counted per peer too."""
        key = (getattr(peer, "node", None) or str(peer), reason)
        self.dead_letters_by_peer[key] = self.dead_letters_by_peer.get(key, 0) + 1
        self._host.dead_letter(recipient, message, reason)
