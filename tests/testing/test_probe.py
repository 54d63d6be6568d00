"""TestProbe: expectations take messages in arrival order, and a failed one
says what the probe received."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorStopped,
    ActorSystem,
    AskTimeout,
    StopReason,
    Terminated,
)
from actors.testing import TestProbe, await_assert, wait_all_blocked

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Ping:
    n: int
    reply_to: ActorRef[Any] | None = None


@dataclass(frozen=True)
class Pong:
    n: int


class Ponger(Actor):
    """Answers each Ping to its reply_to."""

    def receive(self, message: Any) -> Any:
        if isinstance(message, Ping) and message.reply_to is not None:
            message.reply_to.tell(Pong(message.n))
        elif message == "stop":
            self.context.stop()
        return None


async def test_expect_message_matches_a_value_a_type_or_a_predicate(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    ponger = actor_system.spawn(Ponger)
    for n in range(3):
        ponger.tell(Ping(n, probe.ref))
    assert await probe.expect_message(Pong(0)) == Pong(0)
    assert await probe.expect_message(Pong) == Pong(1)
    assert await probe.expect_message(lambda m: m.n == 2) == Pong(2)


async def test_expect_message_without_argument_takes_any_message(
    probe: TestProbe[Any],
) -> None:
    probe.ref.tell(None)
    assert await probe.expect_message(lambda m: m is None) is None
    probe.ref.tell("x")
    assert await probe.expect_message() == "x"


async def test_a_failed_expectation_lists_the_messages_received(
    probe: TestProbe[Any],
) -> None:
    probe.ref.tell("hello")
    probe.ref.tell(Pong(1))
    probe.ref.tell("later")
    await probe.expect_message("hello")
    with pytest.raises(AssertionError) as failure:
        await probe.expect_message(Pong(2))
    text = str(failure.value)
    assert text == (
        f"{probe.path}: expected a message equal to Pong(n=2), but got Pong(n=1)\n"
        "Messages the probe received, oldest first:\n"
        "    'hello'   (taken by an earlier expectation)\n"
        "  > Pong(n=1)   <- this one\n"
        "    'later'   (not taken yet)"
    )


async def test_a_timed_out_expectation_says_so_and_that_nothing_came(
    probe: TestProbe[Any],
) -> None:
    with pytest.raises(AssertionError) as failure:
        await probe.expect_message(Pong, timeout=0.01)
    assert str(failure.value) == (
        f"{probe.path}: expected a message of type Pong, but none came within "
        "0.01 s\nThe probe has received no message."
    )


async def test_a_predicate_that_asserts_is_shown_in_the_failure(
    probe: TestProbe[Any],
) -> None:
    def is_big(message: Any) -> bool:
        assert message > 10, f"{message} is small"
        return True

    probe.ref.tell(3)
    with pytest.raises(AssertionError, match="The predicate raised: AssertionError"):
        await probe.expect_message(is_big)


async def test_expect_no_message_passes_on_silence_and_fails_on_a_message(
    probe: TestProbe[Any],
) -> None:
    await probe.expect_no_message(0.01)
    await probe.expect_no_message(0)
    probe.ref.tell("noise")
    with pytest.raises(AssertionError, match="expected no message within 0 s, but got"):
        await probe.expect_no_message(0)


async def test_receive_messages_takes_n_in_order_or_reports_how_many_came(
    probe: TestProbe[Any],
) -> None:
    for n in range(3):
        probe.ref.tell(n)
    assert await probe.receive_messages(2) == [0, 1]
    with pytest.raises(AssertionError, match="expected 3 messages, but only 1 came"):
        await probe.receive_messages(3, timeout=0.01)


async def test_fish_for_message_skips_until_the_function_accepts(
    probe: TestProbe[Any],
) -> None:
    for n in range(5):
        probe.ref.tell(n)
    assert await probe.fish_for_message(lambda m: m >= 3) == 3
    assert await probe.expect_message(4) == 4


async def test_a_probe_can_be_asked_and_replies_when_the_test_says(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    async with anyio.create_task_group() as tg:
        replies: list[Any] = []

        async def ask() -> None:
            replies.append(await probe.ref.ask("question"))

        tg.start_soon(ask)
        assert await probe.expect_message("question") == "question"
        # Messages keep arriving while the ask waits for the test's reply, and
        # the reply still goes to the last asked message taken.
        probe.ref.tell("meanwhile")
        assert await probe.expect_message("meanwhile") == "meanwhile"
        probe.reply(42)
        with pytest.raises(RuntimeError, match="no ask to reply to"):
            probe.reply(43)  # each ask is answered once
    assert replies == [42]


async def test_reply_answers_the_last_asked_message_an_expectation_took(
    probe: TestProbe[Any],
) -> None:
    async with anyio.create_task_group() as tg:
        replies: list[Any] = []

        async def ask(message: str) -> None:
            try:
                replies.append(await probe.ref.ask(message))
            except KeyError as exc:
                replies.append(exc)

        tg.start_soon(ask, "a")
        await probe.expect_message("a")
        probe.reply("A")
        tg.start_soon(ask, "b")
        await probe.expect_message("b")
        probe.reply_error(KeyError("b"))
    assert replies[0] == "A"
    assert isinstance(replies[1], KeyError)


async def test_an_unanswered_ask_fails_with_actor_stopped_when_the_probe_stops(
    probe: TestProbe[Any],
) -> None:
    async with anyio.create_task_group() as tg:
        outcome: list[BaseException] = []

        async def ask() -> None:
            try:
                await probe.ref.ask("q")
            except ActorStopped as exc:
                outcome.append(exc)

        tg.start_soon(ask)
        await probe.expect_message("q")
        probe.stop()
    assert len(outcome) == 1
    probe.ref.tell("after")  # a dead letter, as to any stopped actor
    assert probe.queued == []


async def test_an_ask_the_probe_never_answers_times_out(
    probe: TestProbe[Any],
) -> None:
    with pytest.raises(AskTimeout):
        await probe.ref.ask("q", timeout=0.01)
    await probe.expect_message("q")


async def test_a_probe_watches_and_expects_terminated(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    ponger = actor_system.spawn(Ponger)
    probe.watch(ponger)
    ponger.stop()
    terminated = await probe.expect_terminated(ponger)
    assert terminated.reason is StopReason.NORMAL


async def test_expect_terminated_fails_on_another_message(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    ponger = actor_system.spawn(Ponger)
    probe.watch(ponger)
    probe.ref.tell("not it")
    with pytest.raises(AssertionError, match=r"Terminated\(/user/ponger-\d+\) is true"):
        await probe.expect_terminated(ponger, timeout=0.01)


async def test_a_terminated_comes_after_the_messages_its_actor_sent(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    ponger = actor_system.spawn(Ponger)
    probe.watch(ponger)
    for n in range(10):
        ponger.tell(Ping(n, probe.ref))
    ponger.tell("stop")
    assert await probe.receive_messages(10) == [Pong(n) for n in range(10)]
    await probe.expect_terminated(ponger)


async def test_within_gives_expectations_its_remaining_time(
    probe: TestProbe[Any],
) -> None:
    with pytest.raises(AssertionError, match="none came within"):
        async with probe.within(0.02):
            await probe.expect_message()
    probe.ref.tell(1)
    async with probe.within(0, 5):
        await probe.expect_message(1)


async def test_within_fails_a_block_that_ends_too_early(
    probe: TestProbe[Any],
) -> None:
    with pytest.raises(AssertionError, match=r"less than its minimum of 1\.0 s"):
        async with probe.within(1.0, 2.0):
            pass
    with pytest.raises(ValueError, match="min <= max"):
        probe.within(2.0, 1.0)


async def test_await_assert_retries_until_the_assertion_holds(
    probe: TestProbe[Any],
) -> None:
    seen: list[int] = []

    async def later() -> None:
        await anyio.sleep(0.005)
        seen.append(1)

    async with anyio.create_task_group() as tg:
        tg.start_soon(later)
        await probe.await_assert(lambda: _check(seen == [1]))
    with pytest.raises(AssertionError, match=r"still failing after 0\.02 s"):
        await await_assert(lambda: _check(False), timeout=0.02)


def _check(condition: bool) -> None:
    assert condition


async def test_probes_from_the_factory_have_their_own_names(
    probe_factory: Any,
) -> None:
    a = probe_factory(name="a")
    b = probe_factory()
    assert a.path == "/user/a"
    assert a.path != b.path
    b.ref.tell("for b")
    await a.expect_no_message(0)
    assert await b.expect_message() == "for b"


async def test_a_probe_needs_a_running_system() -> None:
    from actors import SystemNotRunning

    system = ActorSystem()
    with pytest.raises(SystemNotRunning):
        TestProbe(system)


async def test_within_fails_a_block_that_takes_too_long(
    probe: TestProbe[Any],
) -> None:
    too_long = pytest.raises(AssertionError, match=r"more than its maximum of 0\.001 s")
    with too_long, probe.within(0.001):  # a plain `with` works too
        await anyio.sleep(0.01)


async def test_await_assert_takes_an_async_assertion(probe: TestProbe[Any]) -> None:
    probe.ref.tell("x")

    async def queued() -> None:
        assert probe.queued == ["x"]

    await await_assert(queued)
    assert "1 queued" in repr(probe)


async def test_a_probe_in_another_system_is_reached_through_its_ref(
    actor_system: ActorSystem,
) -> None:
    async with ActorSystem() as other:
        probe = TestProbe[Any](other, name="elsewhere")
        ponger = actor_system.spawn(Ponger)
        ponger.tell(Ping(7, probe.ref))
        assert await probe.expect_message(Pong) == Pong(7)
        assert probe.path == "/user/elsewhere"


async def test_an_expectation_on_a_stopped_probe_fails_at_once_and_says_why(
    probe: TestProbe[Any],
) -> None:
    probe.stop()
    with pytest.raises(AssertionError, match="The probe has stopped"):
        await probe.expect_message(timeout=60.0)


BAD_TIMEOUTS = [
    ("1", TypeError, "timeout must be a number of seconds"),
    (float("nan"), ValueError, "timeout must be >= 0 and finite"),
    (-1, ValueError, "timeout must be >= 0 and finite"),
    (float("inf"), ValueError, "timeout must be >= 0 and finite"),
    (True, TypeError, "timeout must be a number of seconds"),
]


@pytest.mark.parametrize(("timeout", "error", "says"), BAD_TIMEOUTS)
async def test_a_bad_timeout_is_refused_at_once_naming_it(
    actor_system: ActorSystem,
    probe: TestProbe[Any],
    timeout: Any,
    error: type[Exception],
    says: str,
) -> None:
    # Issue 22: "1" failed inside with float + str, NaN with anyio's message,
    # a negative one was accepted, inf with no message hung.
    ponger = actor_system.spawn(Ponger)
    probe.watch(ponger)
    with anyio.fail_after(5):
        for expectation in (
            lambda: probe.expect_message(timeout=timeout),
            lambda: probe.fish_for_message(bool, timeout=timeout),
            lambda: probe.receive_messages(1, timeout=timeout),
            lambda: probe.expect_terminated(ponger, timeout=timeout),
            lambda: probe.await_assert(lambda: None, timeout=timeout),
            lambda: await_assert(lambda: None, timeout=timeout),
        ):
            with pytest.raises(error, match=says):
                await expectation()
        with pytest.raises(error, match=says.replace("timeout", "within")):
            await probe.expect_no_message(timeout)
        with pytest.raises(error, match=says.replace("timeout", "max")):
            probe.within(timeout)
        with pytest.raises(error, match=says.replace("timeout", "min")):
            probe.within(timeout, 1.0)


async def test_a_message_told_to_a_probe_is_queued_at_once(
    probe: TestProbe[Any],
) -> None:
    # Its mailbox hands every message to the probe as it is told (no run of
    # its actor needed), whatever the runtime's fast path for tells does.
    probe.ref.tell("here")
    assert probe.queued == ["here"]


async def test_a_zero_timeout_takes_only_what_is_queued(
    probe: TestProbe[Any],
) -> None:
    probe.ref.tell("here")
    assert await probe.expect_message("here", timeout=0) == "here"
    with pytest.raises(AssertionError, match="none came within 0 s"):
        await probe.expect_message(timeout=0)


async def test_a_bad_default_timeout_or_interval_is_refused(
    actor_system: ActorSystem,
) -> None:
    with pytest.raises(ValueError, match="default_timeout must be > 0"):
        TestProbe(actor_system, default_timeout=0)
    with pytest.raises(TypeError, match="default_timeout must be a number"):
        TestProbe(actor_system, default_timeout="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interval must be > 0"):
        await await_assert(lambda: None, interval=-0.5)


async def test_expect_terminated_of_an_unwatched_ref_fails_at_once_saying_watch(
    actor_system: ActorSystem, probe: TestProbe[Any]
) -> None:
    ponger = actor_system.spawn(Ponger)
    with anyio.fail_after(1):  # at once, not after the (long) timeout
        with pytest.raises(RuntimeError, match=r"call probe\.watch\(ref\) first"):
            await probe.expect_terminated(ponger, timeout=60)
    # Once watched, and also after its Terminated arrived (the watch is over
    # then, the notice is queued), it works.
    probe.watch(ponger)
    ponger.stop()
    await ponger.join()
    await wait_all_blocked()  # the probe's actor has taken the notice
    assert [type(m) for m in probe.queued] == [Terminated]
    terminated = await probe.expect_terminated(ponger)
    assert terminated.reason is StopReason.NORMAL
    with pytest.raises(TypeError, match="expect_terminated"):
        await probe.expect_terminated("ponger")  # type: ignore[arg-type]
