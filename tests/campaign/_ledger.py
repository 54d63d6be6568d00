"""The campaign's books: what each operation did, what the actors handled, what
became a dead letter, and the invariant that ties them together.

Every message carries a unique id (a bare ``None`` message cannot: those are
counted in aggregate). Each sending call records one outcome for its id; each
successful handler run records the id once; each dead letter is counted by the
id of its message. At the end of a run, after the system has exited,
:func:`check` compares the three per id:

====================  ================================================
outcome of the call   what must have happened to the message
====================  ================================================
accepted              handled once or dead-lettered once (``h + d == 1``)
rejected              nothing (``MailboxFull``/``ActorStopped`` at the call)
cancelled             nothing: an anyio cancel scope interrupted a waiting
                      ``send`` (documented: "a send cancelled while waiting
                      enqueues nothing")
uncertain             at most once (``h + d <= 1``): a native
                      ``Task.cancel()`` of a waiting send (documented: the
                      message may have moved in), a call interrupted by the
                      system's teardown
ask ok                handled once, the reply is the id
ask failed            the handler's exception: dead-lettered once
ask stopped           not handled; dead-lettered iff the ask was queued
                      ("stopped before replying")
ask abandoned         timed out or cancelled: at most once, and a handled
                      abandoned ask's reply is a dead letter
                      ("ask abandoned", ``r == h``)
ask error reply       the handler answered ``ErrorReply(exc)``: handled
                      once, no dead letter (the asker raised ``exc``)
piped work            a ``context.run`` whose work never returned (the end
                      of its incarnation cancelled it): nothing
====================  ================================================

A stashed message is no exception: handled once after it is unstashed (by
this incarnation or, put back, by the next), or one dead letter when the
actor stops with it stashed. A piped result (``context.run``) is booked
accepted when its work returns: handled once or one dead letter (``Result``
or what ``then`` made of it). A ``context.ask``'s reply comes back as a
``Result`` too: per request id it reaches the asking actor (booked by the
reply adapter) at most once, and otherwise is at most one dead letter
(``Result`` dead letters that hold no id, an ``AskTimeout`` say, are checked
in aggregate).

A tell whose target had stopped at the call (``ledger.told_stopped``) is
accepted, never handled, and is exactly one dead letter "actor stopped" (as
Erlang's ``!``: the call does not raise); an ``ActorStopped`` from a tell is
an outcome of its own, a violation.

and, always: no id is handled twice, nothing is handled or dead-lettered that
was never sent.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from actors import ReceiveTimeout, Result

__all__ = [
    "ABANDONED",
    "ACCEPTED",
    "ASK_ERROR_REPLY",
    "ASK_FAILED",
    "ASK_OK",
    "ASK_STOPPED",
    "ASK_STOPPED_QUEUED",
    "CANCELLED",
    "INFLIGHT",
    "PIPE_WORK",
    "REJECTED",
    "UNCERTAIN",
    "CTX_DONE",
    "Cast",
    "CtxDone",
    "Ledger",
    "Msg",
    "Pipe",
    "Volley",
    "Tick",
    "check",
    "key_of",
]

# Outcomes of a sending call.
INFLIGHT = "inflight"  # recorded before the call; left when the call never ended
ACCEPTED = "accepted"
REJECTED = "rejected"
CANCELLED = "cancelled"
UNCERTAIN = "uncertain"
ASK_OK = "ask ok"
ASK_FAILED = "ask failed"
ASK_STOPPED = "ask stopped"  # ActorStopped at the call: never queued
ASK_STOPPED_QUEUED = "ask stopped queued"  # "stopped before replying"
ABANDONED = "ask abandoned"
ASK_ERROR_REPLY = "ask error reply"  # the handler returned ErrorReply
PIPE_WORK = "piped work"  # context.run work that has not returned

#: The dead-letter reason of a reply nobody waited for any more.
REPLY_REASON = "ask abandoned"


class Msg:
    """A message object holding its id (``payload`` may be None)."""

    __slots__ = ("id", "payload")

    def __init__(self, id: int, payload: object = None) -> None:
        self.id = id
        self.payload = payload

    def __repr__(self) -> str:
        return f"Msg({self.id})"


class Cast:
    """A broadcast message: one per worker, booked per (id, worker path)."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id

    def __repr__(self) -> str:
        return f"Cast({self.id})"


class Pipe:
    """What ``context.run`` work returns: the id of a piped message."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:
        self.id = id

    def __repr__(self) -> str:
        return f"Pipe({self.id})"


class Volley:
    """One hop of a ping-pong rally: the receiver tells ``back`` the next
    hop (a fresh id) while ``hops`` is > 0."""

    __slots__ = ("back", "hops", "id")

    def __init__(self, id: int, hops: int, back: Any) -> None:
        self.id = id
        self.hops = hops
        self.back = back

    def __repr__(self) -> str:
        return f"Volley({self.id}, {self.hops})"


class CtxDone:
    """What a ``context.ask`` reply adapter hands to ``receive`` (the reply is
    booked by then; a teardown interrupting its handler makes it a dead
    letter)."""

    __slots__ = ()


CTX_DONE = CtxDone()


class Tick:
    """A timer's message; ``token`` is unique for single timers, None for
    periodic ones."""

    __slots__ = ("token",)

    def __init__(self, token: int | None) -> None:
        self.token = token

    def __repr__(self) -> str:
        return f"Tick({self.token})"


#: Key of a bare None message (no id: counted in aggregate).
NONE_KEY = "none"


def key_of(message: object) -> Any:
    """The id of a message: ``Msg``, ``("m", id)`` or a bare int; ``NONE_KEY``
    for None; ``("cast", id)`` for a broadcast (per worker); None otherwise."""
    t = type(message)
    if t is Msg:
        return message.id  # type: ignore[attr-defined]
    if t is int:
        return message
    if t is tuple and len(message) == 2 and message[0] == "m":  # type: ignore[arg-type]
        return message[1]  # type: ignore[index]
    if message is None:
        return NONE_KEY
    if t is Cast:
        return ("cast", message.id)  # type: ignore[attr-defined]
    if t is Pipe or t is Volley:
        return message.id  # type: ignore[attr-defined]
    if t is Result and message.ok and type(message.value) is Pipe:  # type: ignore[attr-defined]
        return message.value.id  # type: ignore[attr-defined]
    return None


@dataclass
class Ledger:
    """Everything a run booked (see the module docstring)."""

    next_id: int = 0
    outcome: dict[int, str] = field(default_factory=dict)
    kind: dict[int, str] = field(default_factory=dict)  # which operation sent it
    target: dict[int, str] = field(default_factory=dict)  # path it was sent to
    handled: Counter[Any] = field(default_factory=Counter)
    replies: dict[int, object] = field(default_factory=dict)  # ask ok: the reply
    plans: dict[int, str] = field(default_factory=dict)  # id -> fault kind / "stop"
    # Bare None messages: booked in aggregate.
    none_outcomes: Counter[str] = field(default_factory=Counter)
    none_handled: int = 0
    # Broadcasts: id -> pool size.
    casts: dict[int, int] = field(default_factory=dict)
    # Single timers: token -> times handled.
    timer_tokens: int = 0
    timers_handled: Counter[int] = field(default_factory=Counter)
    # context.ask replies: request id -> times the reply adapter ran; how
    # many context.ask calls started.
    ctx_replies: Counter[int] = field(default_factory=Counter)
    ctx_asks: int = 0
    # Stashes: ids stashed once (a stashed id is handled when it comes back).
    stashed: set[Any] = field(default_factory=set)
    # Tells to an actor (or pool) already stopped at the call: each one a
    # dead letter "actor stopped", never handled.
    told_stopped: set[int] = field(default_factory=set)
    # Op counts by kind, for the report.
    ops: Counter[str] = field(default_factory=Counter)

    def new_id(self, kind: str, target: str) -> int:
        self.next_id += 1
        i = self.next_id
        self.outcome[i] = INFLIGHT
        self.kind[i] = kind
        self.target[i] = target
        return i

    def new_timer_token(self) -> int:
        self.timer_tokens += 1
        return self.timer_tokens


def check(
    ledger: Ledger, dead_letters: list[Any], *, limit: int = 20
) -> tuple[list[str], Counter[str]]:
    """Compare the books with the dead letters.

    Args:
        ledger: the run's ledger.
        dead_letters: every ``DeadLetter(recipient, message, reason)`` of the run.
        limit: at most this many violations are described.

    Returns:
        ``(violations, totals)``: descriptions of what broke the invariant
        (empty: it held) and counts for the report.
    """
    dead: Counter[Any] = Counter()
    dead_replies: Counter[Any] = Counter()
    dead_reasons: dict[Any, list[str]] = {}
    none_dead = 0
    none_dead_replies = 0
    unknown: list[str] = []
    ctx_dead: Counter[int] = Counter()
    ctx_dead_other = 0
    timers_dead: Counter[int] = Counter()
    for letter in dead_letters:
        message, reason = letter.message, letter.reason
        if type(message) is Result and not (message.ok and type(message.value) is Pipe):
            # A context.ask reply that did not reach its actor.
            value = message.value if message.ok else None
            if value is None and not message.ok:
                value = getattr(message.error, "key", None)
            if type(value) is int and ledger.kind.get(value) == "context ask":
                ctx_dead[value] += 1
            else:
                ctx_dead_other += 1
            continue
        if type(message) is Tick:  # a stashed firing the actor stopped with
            if message.token is not None:
                timers_dead[message.token] += 1
            continue
        if type(message) is ReceiveTimeout:  # stashed, then the actor stopped
            continue
        if type(message) is CtxDone:  # its handler was interrupted
            continue
        key = key_of(message)
        if key == NONE_KEY:
            if reason == REPLY_REASON:
                none_dead_replies += 1
            else:
                none_dead += 1
            continue
        if type(key) is tuple:  # a broadcast: per worker
            key = (key[0], key[1], letter.recipient.path)
        if key is None:
            unknown.append(f"{reason}: {message!r} to {letter.recipient.path}")
            continue
        if reason == REPLY_REASON:
            dead_replies[key] += 1
        else:
            dead[key] += 1
        dead_reasons.setdefault(key, []).append(reason)

    out: list[str] = []

    def bad(cls: str, text: str) -> None:
        if len(out) < limit:
            out.append(f"[{cls}] {text}")
        elif len(out) == limit:
            out.append("[more] ...")
        classes[cls] += 1

    classes: Counter[str] = Counter()
    for text in unknown:
        bad("phantom", f"dead letter of a message nobody sent: {text}")

    handled = ledger.handled
    outcome = ledger.outcome
    totals: Counter[str] = Counter()
    for i, got in outcome.items():
        totals[got] += 1
        h = handled.get(i, 0)
        d = dead.get(i, 0)
        r = dead_replies.get(i, 0)
        ok = True
        if h > 1:
            ok = False
        elif got == ACCEPTED:
            ok = h + d == 1 and r == 0
        elif got in (REJECTED, CANCELLED, ASK_STOPPED):
            ok = h == 0 and d == 0 and r == 0
        elif got == ASK_OK:
            ok = h == 1 and d == 0 and r == 0 and ledger.replies.get(i) == i
        elif got in (ASK_FAILED, ASK_STOPPED_QUEUED):
            ok = h == 0 and d == 1 and r == 0
        elif got == ABANDONED:
            ok = h + d <= 1 and r == h
        elif got == ASK_ERROR_REPLY:
            ok = h == 1 and d == 0 and r == 0
        elif got == PIPE_WORK:
            ok = h == 0 and d == 0 and r == 0
        elif got in (UNCERTAIN, INFLIGHT):
            ok = h + d <= 1 and r <= h
        else:
            ok = False
        if not ok:
            totals["violations"] += 1
            bad(
                _classify(got, h, d, r),
                f"id {i} ({ledger.kind[i]} to {ledger.target[i]}, "
                f"plan {ledger.plans.get(i)}): outcome {got!r} but handled {h}x, "
                f"dead-lettered {d}x {dead_reasons.get(i, [])}, "
                f"reply dead-lettered {r}x"
                + (
                    f", reply {ledger.replies.get(i)!r}"
                    if got == ASK_OK and ledger.replies.get(i) != i
                    else ""
                ),
            )

    # A tell to a stopped actor is a dead letter at the call ("actor
    # stopped"), as Erlang's ! and Akka's tell, never an exception.
    for i in ledger.told_stopped:
        if handled.get(i, 0) or dead_reasons.get(i) != ["actor stopped"]:
            bad(
                "tell to a stopped actor",
                f"id {i} (tell to {ledger.target[i]}, stopped at the call): "
                f"handled {handled.get(i, 0)}x, dead letters "
                f"{dead_reasons.get(i, [])}",
            )
    totals["tells to stopped actors"] = len(ledger.told_stopped)

    # context.ask replies: each reaches its actor or is a dead letter, at most
    # once (the work asking may be cancelled: then neither).
    for k in set(ledger.ctx_replies) | set(ctx_dead):
        n = ledger.ctx_replies.get(k, 0) + ctx_dead.get(k, 0)
        if n > 1:
            bad(
                "duplicate",
                f"context.ask {k}: reply delivered {ledger.ctx_replies.get(k, 0)}x, "
                f"dead-lettered {ctx_dead.get(k, 0)}x",
            )
    replies_seen = sum(ledger.ctx_replies.values()) + sum(ctx_dead.values())
    if replies_seen + ctx_dead_other > ledger.ctx_asks:
        bad(
            "duplicate",
            f"{ledger.ctx_asks} context.ask calls but {replies_seen} replies and "
            f"{ctx_dead_other} other dead Results",
        )

    # Ids handled or dead-lettered that no call sent.
    for key in set(handled) | set(dead) | set(dead_replies):
        if type(key) is int and key not in outcome:
            bad("phantom", f"id {key} handled/dead-lettered but never sent")

    # Broadcasts: per worker at most once; no worker more than the pool size.
    per_cast: Counter[int] = Counter()
    for key, n in list(handled.items()) + list(dead.items()):
        if type(key) is tuple:
            if n > 1:
                bad("duplicate", f"broadcast {key[1]} reached {key[2]} {n}x")
            per_cast[key[1]] += n
    for key in dead_replies:
        if type(key) is tuple:
            bad("phantom", f"broadcast {key} has a dead reply")
    for cast, n in per_cast.items():
        size = ledger.casts.get(cast)
        if size is None:
            bad("phantom", f"broadcast {cast} handled but never sent")
        elif n > size:
            bad("duplicate", f"broadcast {cast}: {n} deliveries to a pool of {size}")

    # Bare None messages, in aggregate.
    no = ledger.none_outcomes
    must = no[ACCEPTED] + no[ASK_OK] + no[ASK_FAILED] + no[ASK_STOPPED_QUEUED]
    may = no[ABANDONED] + no[UNCERTAIN] + no[INFLIGHT]
    seen = ledger.none_handled + none_dead
    if not must <= seen <= must + may:
        bad(
            "none lost" if seen < must else "none extra",
            f"None messages: {dict(no)} but handled {ledger.none_handled}, "
            f"dead-lettered {none_dead} (expected between {must} and {must + may})",
        )
    if none_dead_replies > ledger.none_handled:
        bad(
            "phantom",
            f"None asks: {none_dead_replies} dead replies, "
            f"{ledger.none_handled} handled",
        )

    # Single timers fire at most once (handled, or dead-lettered stashed).
    for token in set(ledger.timers_handled) | set(timers_dead):
        h = ledger.timers_handled.get(token, 0)
        d = timers_dead.get(token, 0)
        if h + d > 1:
            bad("duplicate", f"single timer {token} handled {h}x, dead-lettered {d}x")
        elif d and ("tick", token) not in ledger.stashed:
            bad("phantom", f"single timer {token} dead-lettered but never stashed")

    totals.update({f"violation {k}": v for k, v in classes.items()})
    totals["handled"] = sum(handled.values()) + ledger.none_handled
    totals["dead letters"] = len(dead_letters)
    totals["none messages"] = sum(no.values())
    totals["broadcasts"] = len(ledger.casts)
    totals["stashed"] = len(ledger.stashed)
    totals["context asks"] = ledger.ctx_asks
    return out, totals


def _classify(outcome: str, h: int, d: int, r: int) -> str:
    """A short name for the way one id broke the invariant."""
    if h > 1 or d > 1 or r > 1:
        return "duplicate"
    if h + d > 1:
        return "handled and dead"
    if outcome in (REJECTED, CANCELLED, ASK_STOPPED) and h + d:
        return "rejected yet delivered"
    if outcome == ABANDONED and h == 1 and r == 0:
        return "reply lost"
    if outcome == ASK_OK and h == 1:
        return "wrong reply"
    if h + d == 0:
        return "lost"
    return "other"
