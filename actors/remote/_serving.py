"""Inbound asks: handing an ask from another node to the local actor, and
sending its answer back.

An inbound ask is enqueued at once (``RemoteHost.ask_nowait``), so it keeps
its FIFO place among the tells that came with it. Its answer goes back by
one path, whichever way it is awaited: from the replying actor's task
(``on_done``, the default: no task of our own per ask) or, with a
``serve_timeout``, from a task that awaits it for at most that long. A
reply the codec cannot encode goes back as a failure carrying the
``TypeError``; a handler's exception as itself (see the codec).

Answers go to the asker's node in FIFO order with what this node sent it
before (its outbound buffer), or, for a program that is not a node, to the
NATS reply subject of its request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup

from .. import ActorStopped, MailboxFull
from ..extension import LocalAsk, RemoteHost
from ..nats import Client, NatsError
from ._errors import FrameTooLarge, NodeUnreachable
from ._local import Local
from ._node import NodeAddress
from ._observer import Receipt
from ._peers import Peers
from ._wire import Wire

__all__ = ["Serving"]

logger = logging.getLogger("actors.remote")


class Serving:
    """The inbound asks of one node (see the module doc).

    Args:
        wire: the node's encoder.
        peers: the peer table (answers to nodes go through their buffers).
        local: this node's actors.
        host: the system the node joined.
        serve_timeout: seconds an ask may wait for its actor (None: as long
            as the actor takes).
        bad: counts bad input (an answer that could not be sent).
    """

    def __init__(
        self,
        wire: Wire,
        peers: Peers,
        local: Local,
        host: RemoteHost,
        serve_timeout: float | None,
        bad: Callable[[object, str, BaseException], None],
    ) -> None:
        self._wire = wire
        self._peers = peers
        self._local = local
        self._host = host
        self._serve_timeout = serve_timeout
        self._bad = bad
        self._client: Client | None = None
        self._tg: TaskGroup | None = None
        #: Inbound asks being served now.
        self.count = 0
        self._idle: anyio.Event | None = None

    def attach(self, client: Client, tg: TaskGroup) -> None:
        """The node is connected; tasks for ``serve_timeout`` run in ``tg``."""
        self._client = client
        self._tg = tg

    async def wait_idle(self) -> None:
        """Return once no inbound ask is being served (their answers sent)."""
        if self.count:
            self._idle = anyio.Event()
            await self._idle.wait()

    # -- serving -----------------------------------------------------------------

    def serve(
        self,
        path: str,
        ask_id: int,
        message: object,
        sender: NodeAddress | None,
        reply_to: str | None,
        receipt: Receipt | None = None,
    ) -> None:
        """Ask the local actor at ``path`` ``message`` for ``sender`` (or the
        program answered at ``reply_to``); its answer goes back carrying
        ``ask_id``. ``receipt``: the receive span of a traced node, ended
        when the answer is sent."""
        ref = self._local.find(path)
        if ref is None:
            # An ask comes through a ref, so the actor was there: it has
            # stopped, and the asker gets what a local ask would.
            error = ActorStopped(
                f"no actor {path!r} runs on node {self._local.address} (it "
                "stopped, or never ran there)"
            )
            self.fail(sender, reply_to, ask_id, error, receipt)
            return
        context = None if receipt is None else receipt.context
        try:
            if self._serve_timeout is None:
                # Answered from the replying actor's task: no task per ask.
                self._host.ask_nowait(
                    ref,
                    message,
                    context=context,
                    on_done=_Served(self, ask_id, sender, reply_to, receipt),
                )
            else:
                local = self._host.ask_nowait(ref, message, context=context)
                tg = self._tg
                assert tg is not None
                tg.start_soon(self._await, local, ask_id, sender, reply_to, receipt)
        except (MailboxFull, ActorStopped, TypeError) as exc:
            self.fail(sender, reply_to, ask_id, exc, receipt)
            return
        self.count += 1

    async def _await(
        self,
        local: LocalAsk,
        ask_id: int,
        sender: NodeAddress | None,
        reply_to: str | None,
        receipt: Receipt | None,
    ) -> None:
        try:
            value = await local.result(self._serve_timeout)
        except Exception as exc:
            self.finish(ask_id, sender, reply_to, receipt, None, exc)
        except BaseException:
            self._served(receipt, None)  # cancelled: no answer (the asker times out)
            raise
        else:
            self.finish(ask_id, sender, reply_to, receipt, value, None)

    def finish(
        self,
        ask_id: int,
        sender: NodeAddress | None,
        reply_to: str | None,
        receipt: Receipt | None,
        value: object,
        error: BaseException | None,
    ) -> None:
        """The local actor answered an inbound ask (``value``, or ``error``):
        send the answer (the one path for both ways of awaiting it)."""
        wire = self._wire
        try:
            if error is None:
                try:
                    envelope = wire.reply(ask_id, value)
                except TypeError as exc:  # a reply the codec cannot encode
                    error = exc
                    envelope = wire.failure(ask_id, exc)
            else:
                envelope = wire.failure(ask_id, error)
            self.answer(sender, reply_to, ask_id, envelope)
        except Exception:  # in the actor's task: never let it fail there
            logger.exception("answering an ask from %s failed", sender)
        finally:
            # _served written out: a call saved per inbound ask.
            self.count -= 1
            if not self.count and self._idle is not None:
                self._idle.set()
            if receipt is not None:
                receipt.end(error)

    def _served(self, receipt: Receipt | None, error: BaseException | None) -> None:
        self.count -= 1
        if not self.count and self._idle is not None:
            self._idle.set()
        if receipt is not None:
            receipt.end(error)

    def fail(
        self,
        sender: NodeAddress | None,
        reply_to: str | None,
        ask_id: int,
        error: BaseException,
        receipt: Receipt | None = None,
    ) -> None:
        """Answer an ask that could not be handed to an actor with ``error``."""
        self.answer(sender, reply_to, ask_id, self._wire.failure(ask_id, error))
        if receipt is not None:
            receipt.end(error)

    # -- answers -----------------------------------------------------------------

    def answer(
        self,
        sender: NodeAddress | None,
        reply_to: str | None,
        ask_id: int,
        envelope: bytes,
    ) -> None:
        """Send an answer (reply, failure, lookup reply) to the asker: to its
        node in FIFO order, or to the reply subject of a program that is not
        a node."""
        if sender is not None:
            peers = self._peers
            if not peers.open:
                return
            # outbound() only when the buffer is not there: a call saved.
            outbound = peers.outbounds.get(sender) or peers.outbound(sender)
            if outbound is None:
                return  # the asker's node is gone
            try:
                try:
                    if not outbound.put_now(envelope):
                        outbound.put_system(envelope)
                except FrameTooLarge as exc:
                    outbound.put_system(self._wire.failure(ask_id, exc))
            except NodeUnreachable:
                pass
        elif reply_to is not None:
            client = self._client
            if client is None:
                return
            try:
                client.publish_nowait(
                    reply_to, self._wire.sealed(reply_to, None, [envelope])
                )
            except (NatsError, ValueError) as exc:
                self._bad(reply_to, "answer not sent", exc)


class _Served:
    """The ``on_done`` of an inbound ask: its answer goes to the asker."""

    __slots__ = ("ask_id", "receipt", "reply_to", "sender", "serving")

    def __init__(
        self,
        serving: Serving,
        ask_id: int,
        sender: NodeAddress | None,
        reply_to: str | None,
        receipt: Receipt | None,
    ) -> None:
        self.serving = serving
        self.ask_id = ask_id
        self.sender = sender
        self.reply_to = reply_to
        self.receipt = receipt

    def __call__(self, local: LocalAsk) -> None:
        try:
            value = local.outcome()
        except Exception as exc:
            self.serving.finish(
                self.ask_id, self.sender, self.reply_to, self.receipt, None, exc
            )
        else:
            self.serving.finish(
                self.ask_id, self.sender, self.reply_to, self.receipt, value, None
            )
