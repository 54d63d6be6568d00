"""The per-message side of telemetry: the trace envelope, the traced ref, the
traced message loop.

Imported only when a :class:`~actors.Telemetry` is made, so it may import
OpenTelemetry at the top. A system without telemetry never reaches this
module: its cells hold plain :class:`~actors.ActorRef` objects (so ``tell`` is
the untouched fast path, not even an attribute check) and run the plain
``Cell._loop``; a traced system's cells get a :class:`TracedRef` and run
:func:`traced_loop`, both chosen once (per cell, per incarnation).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from opentelemetry.context import Context, attach, detach, get_current
from opentelemetry.trace import SpanKind, set_span_in_context

from ._control import Restart, Stop
from ._dispatch import handle_signal
from ._envelope import EXPIRED, Ask, abandon
from ._errors import AskSelfError, AskTimeout, SystemNotRunning
from ._faults import failed as report_failure
from ._faults import handle_control
from ._invoke import PLAIN, awaitable_class, stray_failure
from ._lifecycle import NOTHING, current_cell
from ._pool import PoolRef
from ._ref import ActorRef, check_timeout, signal_error
from ._telemetry import (
    ABANDONED,
    ERROR,
    OK,
    OUTCOMES,
    SENT,
    metric_attributes,
    record_error,
)
from .mailbox import EndOfMailbox, MailboxClosed, MailboxFull, Signal

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from ._cell import Cell
    from ._deadlines import AskDeadlines
    from ._telemetry import Labels, Telemetry

__all__ = ["Traced", "TracedPoolRef", "TracedRef", "traced_loop"]

M = TypeVar("M", contravariant=True)

_CONSUMER = SpanKind.CONSUMER
_CLIENT = SpanKind.CLIENT
_OUTCOME = "actor.outcome"
_TYPE = "actor.message.type"
_KIND = "actor.message.kind"


class Traced:
    """A message (or an :class:`~actors._envelope.Ask`) in a traced mailbox,
    with the trace context it was sent from and when (``perf_counter``)."""

    __slots__ = ("context", "enqueued", "message")

    def __init__(self, message: Any, context: Context, enqueued: float) -> None:
        self.message = message
        self.context = context
        self.enqueued = enqueued

    def __repr__(self) -> str:
        return f"Traced({self.message!r})"


class TracedRef(ActorRef[M]):
    """The ref of an actor in a traced system: every message carries the
    sender's trace context; asks get a client span."""

    __slots__ = ("labels", "telemetry")

    def __init__(self, cell: Cell, telemetry: Telemetry, labels: Labels) -> None:
        super().__init__(cell)
        self.telemetry = telemetry
        self.labels = labels

    def tell(self, message: M) -> None:
        if isinstance(message, Signal):  # the envelope would hide it
            raise signal_error(message)
        try:
            self._cell.mailbox.try_send(Traced(message, get_current(), perf_counter()))
        except MailboxClosed:
            raise self._stopped() from None
        self.labels.counts[SENT] += 1

    async def send(self, message: M) -> None:
        if isinstance(message, Signal):
            raise signal_error(message)
        # The wait for quota counts as mailbox wait: the clock starts here.
        cell = self._cell
        traced = Traced(message, get_current(), perf_counter())
        try:
            cell.mailbox.try_send(traced)
        except MailboxFull:
            if current_cell.get() is cell:  # as ActorRef.send
                raise MailboxFull(
                    f"{cell.path} sent to its own full mailbox from its own "
                    "handler: it would wait forever (only it makes room)"
                ) from None
            try:
                await cell.mailbox.send(traced)
            except MailboxClosed:
                raise self._stopped() from None
        except MailboxClosed:
            raise self._stopped() from None
        self.labels.counts[SENT] += 1

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        # ActorRef.ask with a client span around it, the span's context in the
        # envelope. Keep the checks in step with ActorRef.ask.
        check_timeout(timeout)
        if isinstance(message, Signal):
            raise signal_error(message)
        cell = self._cell
        if current_cell.get() is cell:
            raise AskSelfError(
                f"{cell.path} asked itself from its own handler: it would never "
                "get the reply (use tell, or call the method directly)"
            )
        deadlines = cell.system._deadlines
        if deadlines is None:
            raise SystemNotRunning(f"the system of {cell.path} is not running")
        return await _ask(
            self.telemetry,
            self.labels,
            cell,
            message,
            deadlines,
            timeout,
            self._try_send,
            self._send,
        )

    def _try_send(self, traced: Traced) -> None:
        try:
            self._cell.mailbox.try_send(traced)
        except MailboxClosed:
            raise self._stopped() from None

    async def _send(self, traced: Traced) -> None:
        try:
            await self._cell.mailbox.send(traced)
        except MailboxClosed:
            raise self._stopped() from None


class TracedPoolRef(PoolRef[M]):
    """A pool's ref in a traced system: like :class:`TracedRef`, for the
    messages the pool routes to its workers."""

    _labels: Labels | None = None

    def _telemetry(self) -> tuple[Telemetry, Labels]:
        telemetry = self._cell.system.telemetry
        assert telemetry is not None
        labels = self._labels
        if labels is None:
            workers = self._workers
            if workers and isinstance(workers[0], TracedRef):
                # The workers' class and the pool's name; the pool's path.
                metric = workers[0].labels.metric
            else:
                metric = metric_attributes(self._cell)
            labels = self._labels = telemetry._labels(self._cell.path, metric)
        return telemetry, labels

    def tell(self, message: M) -> None:
        if isinstance(message, Signal):
            raise signal_error(message)
        labels = self._telemetry()[1]
        traced: Any = Traced(message, get_current(), perf_counter())
        super().tell(traced)
        labels.counts[SENT] += 1

    async def send(self, message: M) -> None:
        if isinstance(message, Signal):
            raise signal_error(message)
        labels = self._telemetry()[1]
        traced: Any = Traced(message, get_current(), perf_counter())
        await super().send(traced)
        labels.counts[SENT] += 1

    def broadcast(self, message: M) -> None:
        if isinstance(message, Signal):
            raise signal_error(message)
        labels = self._telemetry()[1]
        # One envelope for every worker: it is never written to.
        traced: Any = Traced(message, get_current(), perf_counter())
        super().broadcast(traced)
        labels.counts[SENT] += len(self._workers)

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        # PoolRef.ask with a client span; keep the checks in step with it.
        check_timeout(timeout)
        if isinstance(message, Signal):
            raise signal_error(message)
        cell = current_cell.get()
        if cell is not None and cell.parent is self._cell:
            raise AskSelfError(f"{cell.path} asked its own pool from its handler")
        deadlines = self._cell.system._deadlines
        if deadlines is None:
            raise self._stopped()
        telemetry, labels = self._telemetry()
        # PoolRef's tell and send, not ours: the envelope carries the client
        # span's context already.
        return await _ask(
            telemetry,
            labels,
            self._cell,
            message,
            deadlines,
            timeout,
            super().tell,
            super().send,
        )


async def _ask(
    telemetry: Telemetry,
    labels: Labels,
    cell: Cell,
    message: Any,
    deadlines: AskDeadlines,
    timeout: float,
    try_send: Callable[[Any], None],
    send: Callable[[Any], Awaitable[None]],
) -> Any:
    """An ask (checks done) under a client span whose context the envelope
    carries; the span records the outcome and any exception.

    As ``ActorRef.ask``: queued at once, the reply is awaited with the
    system's ask deadlines; a full mailbox is waited for, and the reply, under
    one cancel scope. ``try_send`` raises MailboxFull (and ActorStopped);
    ``send`` waits for room.
    """
    span = telemetry._tracer.start_span(
        labels.ask_name,
        kind=_CLIENT,
        attributes={**labels.ask_attributes, _TYPE: type(message).__qualname__},
    )
    envelope = Ask(message, cell)
    traced = Traced(envelope, set_span_in_context(span), perf_counter())
    outcome = "error"
    try:
        try:
            try_send(traced)
        except MailboxFull:
            with anyio.move_on_after(timeout):
                try:
                    await send(traced)
                except BaseException:
                    abandon(envelope)  # see ActorRef.ask
                    raise
                labels.counts[SENT] += 1
                reply = await envelope.wait(deadlines.backend)
                outcome = "ok"
                return reply
            outcome = "timeout"
            raise AskTimeout(
                f"{labels.path} did not reply within {timeout} s"
            ) from None
        labels.counts[SENT] += 1
        reply = await deadlines.wait(envelope, timeout)
        if reply is EXPIRED:
            outcome = "timeout"
            raise AskTimeout(f"{labels.path} did not reply within {timeout} s")
        outcome = "ok"
        return reply
    except anyio.get_cancelled_exc_class():
        outcome = "cancelled"
        raise
    except BaseException as exc:
        record_error(span, exc)  # never raises, whatever the exception
        raise
    finally:
        span.set_attribute(_OUTCOME, outcome)
        span.end()


async def traced_loop(cell: Cell, telemetry: Telemetry) -> None:
    """``Cell._loop`` with spans, metrics and each message's context restored.

    Keep it in step with ``Cell._loop``: same batches, same control checks
    between messages, same failure handling. Items that are not
    :class:`Traced` (signals; messages put in the mailbox by other means, such
    as a pool's router) run in an empty context.
    """
    mailbox = cell.mailbox
    drain = cell.drain
    control = cell.control
    instance = cell.instance
    assert instance is not None
    receive = instance.receive
    is_async = inspect.iscoroutinefunction(receive)
    system = cell.system
    labels: Labels = cell.ref.labels  # type: ignore[attr-defined]
    start_span = telemetry._tracer.start_span
    duration_record = telemetry._duration.record
    wait_record = telemetry._wait.record
    failing = telemetry._failing
    metric = labels.metric
    counts = labels.counts
    base = labels.span
    name = labels.process_name
    # The task's context is a copy of its spawner's: drop it, so signals and
    # later hooks never run in a stale trace. Never detached: the task's
    # context dies with the task.
    empty = Context()
    attach(empty)
    span: Span | None = None
    token: Any = None
    while True:
        if cell.carry:
            batch, cell.carry = cell.carry, []
        else:
            try:
                batch = await mailbox.receive_batch(drain)
            except EndOfMailbox:
                raise Stop from None
        index = 0
        item: Any = NOTHING
        try:
            for item in batch:
                if control or cell.stop_requested:
                    cell.carry = batch[index:]
                    pending, item = item, NOTHING  # not being handled yet
                    await handle_control(cell)
                    cell.carry = []
                    item = pending
                index += 1
                if type(item) is Traced:
                    parent = item.context
                    started = perf_counter()
                    wait_record(started - item.enqueued, metric)
                    item = item.message
                elif isinstance(item, Signal):
                    await handle_signal(cell, item, receive)
                    continue
                else:
                    parent = empty
                    started = perf_counter()
                if type(item) is Ask:
                    message = item.message
                    kind = "ask"
                else:
                    message = item
                    kind = "tell"
                span = start_span(
                    name,
                    parent,
                    _CONSUMER,
                    {**base, _TYPE: type(message).__qualname__, _KIND: kind},
                )
                token = attach(set_span_in_context(span, parent))
                outcome = OK
                if kind == "ask":
                    cell.current = item
                if is_async:
                    result = await receive(message)
                else:
                    result = receive(message)
                    if result.__class__ not in PLAIN and awaitable_class(
                        result.__class__
                    ):
                        result = await result
                if kind == "ask":
                    cell.current = NOTHING
                    if not item.reply(result, system.backend):
                        outcome = ABANDONED
                        system.dead_letter(cell, message, "ask abandoned")
                detach(token)
                elapsed = perf_counter() - started
                span.set_attribute(_OUTCOME, OUTCOMES[outcome])
                span.end()
                span = None
                duration_record(elapsed, metric)
                counts[outcome] += 1
        except (Restart, Stop):
            raise
        except BaseException as caught:
            exc = (
                caught if isinstance(caught, Exception) else stray_failure(caught)
            )
            if exc is None:  # cancelled inside a handler: close its span
                # As Cell._loop: keep the unfinished rest of the batch (the
                # item in hand included) for _terminate's dead letters.
                cell.carry = batch[index - 1 if item is not NOTHING else index :]
                if span is not None:
                    detach(token)
                    span.set_attribute(_OUTCOME, "cancelled")
                    span.end()
                    span = None
                raise
            cell.current = NOTHING
            cell.carry = batch[index:]
            if span is None:  # a failure outside a handler (control, signal)
                await report_failure(cell, exc, item)
                continue
            # The span stays open and current while the supervisor decides, so
            # its restart or escalation, and the dead letter, are recorded on it.
            failed, span = span, None
            duration_record(perf_counter() - started, metric)
            counts[ERROR] += 1
            record_error(failed, exc)  # never raises, whatever the exception
            failed.set_attribute(_OUTCOME, "error")
            failing[cell] = failed
            try:
                await report_failure(cell, exc, item)
            finally:
                del failing[cell]
                detach(token)
                failed.end()
            # Resumed: go on with the rest of the batch.
