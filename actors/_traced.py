"""The per-message side of telemetry: the trace envelope, the traced refs, and
the instrumented ``receive``.

Imported only when a [``Telemetry``][actors.Telemetry] is made, so it may import
OpenTelemetry at the top. A system without telemetry never reaches this
module: its cells hold plain [``ActorRef``][actors.ActorRef] objects (so ``tell`` is
the untouched fast path, not even an attribute check) and its message loop
calls ``receive`` itself. A traced system's cells get a ``TracedRef``,
whose tells carry the sender's context in a ``Traced`` envelope and whose
asks carry it on the ask's own envelope; and each incarnation's ``receive`` is
wrapped once, when it starts (``instrument``, as OpenTelemetry's
instrumentations wrap the instrumented callable): the same message loop runs,
with or without telemetry.

Its size: the traced refs and the instrumented ``receive`` are the two ends
of one message's trace and share its envelope.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from opentelemetry.context import Context, attach, detach, get_current
from opentelemetry.trace import SpanKind, set_span_in_context

from ._envelope import EXPIRED, Ask, abandon
from ._errors import AskTimeout, SystemNotRunning
from ._invoke import PLAIN, awaitable_class, stray_failure
from ._lifecycle import NOTHING, current_cell
from ._pool import PoolRef
from ._ref import ActorRef, prepare_ask, signal_error, told_stopped
from ._telemetry_labels import (
    ABANDONED,
    ERROR,
    OK,
    OUTCOMES,
    SENT,
    metric_attributes,
    record_error,
)
from .mailbox import MailboxClosed, MailboxFull, Signal

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from ._cell import Cell
    from ._deadlines import AskDeadlines
    from ._telemetry import Telemetry
    from ._telemetry_labels import Labels

__all__ = ["Traced", "TracedPoolRef", "TracedRef", "instrument"]

M = TypeVar("M", contravariant=True)

_CONSUMER = SpanKind.CONSUMER
_CLIENT = SpanKind.CLIENT
_OUTCOME = "actor.outcome"
_TYPE = "actor.message.type"
_KIND = "actor.message.kind"


class Traced:
    """A message (or an ``Ask``) in a traced mailbox,
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
            error = told_stopped(self._cell, message)  # as ActorRef.tell
            if error is not None:
                raise error from None
            return
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
        # envelope.
        cell = self._cell
        deadlines = prepare_ask(cell, message, timeout)
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

    def _try_send(self, envelope: Ask) -> None:
        try:
            self._cell.mailbox.try_send(envelope)
        except MailboxClosed:
            raise self._stopped() from None

    async def _send(self, envelope: Ask) -> None:
        try:
            await self._cell.mailbox.send(envelope)
        except MailboxClosed:
            raise self._stopped() from None


class TracedPoolRef(PoolRef[M]):
    """A pool's ref in a traced system: like ``TracedRef``, for the
    messages the pool routes to its workers."""

    _labels: Labels | None = None

    def _telemetry(self) -> tuple[Telemetry, Labels]:
        telemetry = self._cell.runtime.telemetry
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
        # PoolRef.ask with a client span.
        try:
            deadlines = prepare_ask(self._cell, message, timeout, pool=True)
        except SystemNotRunning:
            raise self._stopped() from None
        telemetry, labels = self._telemetry()
        # PoolRef's own queueing, not our tell and send: the envelope carries
        # the client span's context already (and an ask to a stopped pool
        # must raise, where a tell is a dead letter).
        return await _ask(
            telemetry,
            labels,
            self._cell,
            message,
            deadlines,
            timeout,
            self._offer,
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
    # The envelope carries the client span's context to the handler's span.
    envelope.context = set_span_in_context(span)
    envelope.enqueued = perf_counter()
    outcome = "error"
    try:
        try:
            try_send(envelope)
        except MailboxFull:
            with anyio.move_on_after(timeout):
                try:
                    await send(envelope)
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


class _Handling:
    """One message's span while it is handled (and, after a failure, until the
    supervisor has decided: see
    ``Telemetry._failure_settled``)."""

    __slots__ = ("span", "started", "token")

    def __init__(self, span: Span, token: Any, started: float) -> None:
        self.span = span
        self.token = token
        self.started = started


def instrument(
    cell: Cell, telemetry: Telemetry, receive: Callable[[Any], Any], is_async: bool
) -> Callable[[Any], Any]:
    """``receive`` wrapped for one incarnation of ``cell``: each message is
    handled in the context it was sent from, under a CONSUMER span, with its
    mailbox wait and handling time recorded.

    The message loop calls the wrapper as it would call ``receive``: with a
    told message (a ``Traced`` envelope here, unwrapped), or with an
    ask's message while ``cell.current`` holds the ask (whose envelope carries
    the asker's context). Signals never come here: the loop hands them to the
    plain ``receive``, and they run in an empty context.

    A handler that fails leaves its span open and current: the supervisor's
    restart or escalation, the failure's log record and the dead letter land
    on it; ``Telemetry._failure_settled``
    ends it. A cancellation ends it at once, as "cancelled".
    """
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
    # hooks never run in a stale trace. Never detached: the task's context
    # dies with the task.
    empty = Context()
    attach(empty)

    def begin(message: Any) -> tuple[Any, _Handling, Any]:
        ask = cell.current
        if ask is not NOTHING:  # an ask: its envelope carries the context
            parent = ask.context or empty
            enqueued = ask.enqueued
            kind = "ask"
        elif type(message) is Traced:
            parent = message.context
            enqueued = message.enqueued
            message = message.message
            kind = "tell"
        else:  # put in the mailbox by other means (a pool's router)
            parent = empty
            enqueued = 0.0
            kind = "tell"
        started = perf_counter()
        if enqueued:
            wait_record(started - enqueued, metric)
        span = start_span(
            name,
            parent,
            _CONSUMER,
            {**base, _TYPE: type(message).__qualname__, _KIND: kind},
        )
        token = attach(set_span_in_context(span, parent))
        return message, _Handling(span, token, started), ask

    def end(handling: _Handling, ask: Any) -> None:
        # The loop replies after we return: an asker that left already makes
        # the reply a dead letter ("abandoned").
        outcome = ABANDONED if ask is not NOTHING and ask.abandoned else OK
        detach(handling.token)
        span = handling.span
        span.set_attribute(_OUTCOME, OUTCOMES[outcome])
        span.end()
        duration_record(perf_counter() - handling.started, metric)
        counts[outcome] += 1

    def fail(handling: _Handling, caught: BaseException) -> None:
        span = handling.span
        exc = caught if isinstance(caught, Exception) else stray_failure(caught)
        if exc is None:  # cancelled (or SystemExit): the span ends here
            detach(handling.token)
            span.set_attribute(_OUTCOME, "cancelled")
            span.end()
            return
        duration_record(perf_counter() - handling.started, metric)
        counts[ERROR] += 1
        record_error(span, exc)  # never raises, whatever the exception
        span.set_attribute(_OUTCOME, "error")
        failing[cell] = handling  # ended by Telemetry._failure_settled

    async def finish(awaitable: Any, handling: _Handling, ask: Any) -> Any:
        try:
            result = await awaitable
        except BaseException as caught:
            fail(handling, caught)
            raise
        end(handling, ask)
        return result

    if is_async:

        async def traced_async(message: Any) -> Any:
            message, handling, ask = begin(message)
            try:
                result = await receive(message)
            except BaseException as caught:
                fail(handling, caught)
                raise
            end(handling, ask)
            return result

        return traced_async

    def traced(message: Any) -> Any:
        message, handling, ask = begin(message)
        try:
            result = receive(message)
        except BaseException as caught:
            fail(handling, caught)
            raise
        if result.__class__ not in PLAIN and awaitable_class(result.__class__):
            # An async def behind a sync decorator: the span lasts as long as
            # the coroutine the loop now awaits.
            return finish(result, handling, ask)
        end(handling, ask)
        return result

    return traced
