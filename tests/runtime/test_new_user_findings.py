"""Problems found by using the features that landed with the managing-actors
and typed-actors branches as a new user and as an attacker (background work,
finding actors, stopping the system, first construction in the spawner),
kept as regression tests of the guarantee each one broke."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import anyio
import pytest

from actors import (
    Actor,
    ActorRef,
    ActorStopped,
    ActorSystem,
    Directive,
    OneForOne,
    Result,
    StopReason,
    SystemNotRunning,
    Terminated,
)
from actors._lifecycle import current_cell
from actors._pool import Routing

from ._support import wait_all_blocked

pytestmark = pytest.mark.anyio


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


# -- background work (context.run / context.ask) -------------------------------


class StartsWorkWhileEnding(Actor):
    """Its background work starts more work in its cleanup, as its
    incarnation ends."""

    def __init__(self, gate: anyio.Event, ended: list[str]) -> None:
        self.gate = gate
        self.ended = ended

    def receive(self, message: Any) -> Any:
        if message == "start":
            self.context.run(self.first)
        elif message == "boom":
            raise RuntimeError("boom")
        return message

    async def first(self) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            # A restart ends this incarnation while the actor is alive: the
            # call is accepted, and the work must end with the incarnation.
            self.context.run(self.second)

    async def second(self) -> None:
        self.ended.append("second ran")
        await self.gate.wait()


async def test_work_started_while_the_incarnation_ends_never_outlives_it() -> None:
    gate = anyio.Event()
    ended: list[str] = []
    async with ActorSystem() as system:
        ref = system.spawn(StartsWorkWhileEnding, gate, ended)
        ref.tell("start")
        await wait_all_blocked()
        ref.tell("boom")  # restart: the old incarnation's work is cancelled
        with anyio.fail_after(5):  # the restart used to wait for `second`
            assert await ref.ask("after") == "after"
        assert ended == []  # cancelled before it ran: nothing to wait for
        assert await ref.ask("after") == "after"
    assert ended == []


class ExitsInBackground(Actor):
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def work(self) -> None:
        raise self.exc

    def receive(self, message: Any) -> Any:
        self.context.run(self.work)


@pytest.mark.parametrize("exc_type", [SystemExit, KeyboardInterrupt])
async def test_a_system_exit_from_background_work_surfaces_from_async_with(
    exc_type: type[BaseException],
) -> None:
    # As from a handler: the system shuts down and the exception comes out of
    # the block (asyncio used to tear it out of the event loop, past the
    # block's exit, as it does with any task that raises it).
    exits: list[str] = []
    with pytest.raises(exc_type):
        try:
            with anyio.fail_after(5):
                async with ActorSystem() as system:
                    system.spawn(ExitsInBackground, exc_type()).tell("go")
                    await anyio.sleep_forever()
        finally:
            exits.append("block exited")
    assert exits == ["block exited"]
    assert not system.running


# -- stopping the system -------------------------------------------------------


async def test_system_stop_from_another_thread_stops_the_system() -> None:
    # Thread-safe, as Akka's terminate: the call is handed to the event loop,
    # which wakes up for it (it used to set the loop's events from the other
    # thread, so a loop asleep in its selector never saw the stop).
    waiting = threading.Event()
    errors: list[BaseException] = []

    def stopper() -> None:
        waiting.wait()
        try:
            system.stop()
        except BaseException as exc:  # reported below, in the test
            errors.append(exc)

    thread = threading.Thread(target=stopper)
    async with ActorSystem() as system:
        system.spawn(Echo)
        thread.start()
        with anyio.fail_after(5):
            waiting.set()
            await system.wait_exited()
    thread.join()
    assert errors == []
    assert not system.running


async def test_spawning_from_a_thread_after_stop_raises_system_not_running() -> None:
    # As system.spawn does (it used to be ActorStopped naming the guardian).
    def spawn() -> BaseException | None:
        try:
            system.from_thread.spawn(Echo)
        except BaseException as exc:  # returned to the test
            return exc
        return None

    async with ActorSystem() as system:
        system.stop()
        error = await anyio.to_thread.run_sync(spawn)
        assert isinstance(error, SystemNotRunning), error
        assert "stopping" in str(error)
        await system.wait_exited()


class SpawnsAfterStop(Actor):
    def receive(self, message: Any) -> Any:
        self.context.system.stop()
        child = self.context.spawn(Echo, name="late")  # not asked to stop yet
        return child


async def test_an_actor_spawns_children_until_it_is_asked_to_stop() -> None:
    # What docs/how-to/stopping-the-system.md says: system.spawn is refused
    # from the stop on, an actor's context.spawn until it is asked to stop.
    async with ActorSystem() as system:
        parent = system.spawn(SpawnsAfterStop)
        child = await parent.ask("stop and spawn")
        with pytest.raises(SystemNotRunning):
            system.spawn(Echo)
        await system.wait_exited()
        assert not child.is_alive


# -- first construction in the spawner ----------------------------------------


class StartsWorkThenFails(Actor):
    def __init__(self, gate: anyio.Event, log: list[str]) -> None:
        cell = current_cell.get()  # what context in __init__ will give
        assert cell is not None

        async def work() -> None:
            log.append("work ran")
            await gate.wait()

        cell.context.run(work)
        raise ValueError("refused")


async def test_background_work_a_failing_constructor_started_never_runs() -> None:
    # "What its __init__ started ends with it": children and timers did,
    # background work ran on, and its outcome was a dead letter.
    gate = anyio.Event()
    log: list[str] = []
    async with ActorSystem() as system:
        with pytest.raises(ValueError, match="refused"):
            system.spawn(StartsWorkThenFails, gate, log)
        await wait_all_blocked()
        gate.set()
        await wait_all_blocked()
    assert log == []
    assert system.dead_letters.count == 0


# -- finding actors -------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/user/", "/user/shop/", "//user/shop", "/user//shop", "/user/./shop"]
)
async def test_lookup_of_a_malformed_path_says_what_is_wrong(path: str) -> None:
    # "/user/shop/" used to be "no actor at '/user/shop/'" while /user/shop
    # was alive: a ValueError naming the empty segment says what to fix.
    async with ActorSystem() as system:
        system.spawn(Echo, name="shop")
        with pytest.raises(ValueError, match="segment"):
            system.lookup(path)
        assert system.lookup("/user/shop").name == "shop"


# -- watching ---------------------------------------------------------------------


class MatchesTerminated(Actor):
    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    def receive(self, message: Any) -> Any:
        match message:
            case Terminated(ref, reason):  # positional, as the docs write it
                self.seen.append((ref.name, reason))
            case ActorRef() as ref:
                self.context.watch(ref)
        return None


async def test_terminated_matches_positionally_as_ref_and_reason() -> None:
    # The watch page says Terminated(ref, reason); the pattern used to fail
    # the watcher with "Terminated() accepts 0 positional sub-patterns".
    seen: list[Any] = []
    async with ActorSystem() as system:
        watcher = system.spawn(MatchesTerminated, seen)
        watched = system.spawn(Echo, name="watched")
        await watcher.ask(watched)
        watched.stop()
        await watched.join()
        await wait_all_blocked()
        assert system.failures == 0
    assert seen == [("watched", StopReason.NORMAL)]


class ThenAsync(Actor):
    def __init__(self, errors: list[BaseException]) -> None:
        self.errors = errors

    async def later(self, result: Result[Any]) -> Any:
        return ("got", result)

    def receive(self, message: Any) -> Any:
        if message == "async then":
            try:
                self.context.ask(self.context.self_ref, "q", then=self.later)
            except TypeError as exc:
                self.errors.append(exc)
        elif message == "then returns a coroutine":
            self.context.ask(
                self.context.self_ref, "q", then=lambda result: self.later(result)
            )
        elif message == "q":
            return 42
        else:
            self.errors.append(AssertionError(f"receive got {message!r}"))
        return None


async def test_an_async_then_is_refused_instead_of_sending_a_coroutine() -> None:
    # receive used to get the coroutine object as its message (never awaited).
    errors: list[BaseException] = []
    async with ActorSystem() as system:
        ref = system.spawn(ThenAsync, errors)
        ref.tell("async then")
        await wait_all_blocked()
        (error,) = errors
        assert isinstance(error, TypeError) and "sync function" in str(error)
        ref.tell("then returns a coroutine")  # found when the result arrives
        await wait_all_blocked()
        assert system.failures == 1 and system.restarts == 1
    assert len(errors) == 1


def test_a_result_refuses_an_error_that_is_not_an_exception() -> None:
    # Result(error="x") used to be a failed result whose value raised
    # "exceptions must derive from BaseException", far from the mistake.
    with pytest.raises(TypeError, match="error must be an exception"):
        Result(None, error="x")  # type: ignore[arg-type]
    assert not Result(None, error=KeyError("k")).ok
    assert Result(3).value == 3


class InterruptsAtConstruction(Actor):
    def __init__(self) -> None:
        raise KeyboardInterrupt("from the factory")


async def test_from_thread_spawn_raises_a_factorys_base_exception_in_the_thread() -> (
    None
):
    # "from_thread.spawn raises the factory's exception in the calling
    # thread": a KeyboardInterrupt escaped the loop's callback instead (Trio
    # hung, asyncio tore it out of the loop) and the thread waited forever.
    def spawn() -> BaseException | None:
        try:
            system.from_thread.spawn(InterruptsAtConstruction, name="x")
        except BaseException as exc:  # returned to the test
            return exc
        return None

    async with ActorSystem() as system:
        echo = system.spawn(Echo)
        with anyio.fail_after(5):
            error = await anyio.to_thread.run_sync(spawn)
        assert isinstance(error, KeyboardInterrupt)
        assert await echo.ask("still running") == "still running"
        assert system.spawn(Echo, name="x").name == "x"  # the name is free


async def make_echo() -> Echo:
    return Echo()


async def test_an_async_factory_is_refused_saying_so_and_never_left_unawaited() -> (
    None
):
    # It was "returned an instance of coroutine, not an Actor", plus a
    # "coroutine was never awaited" warning.
    async with ActorSystem() as system:
        with pytest.raises(TypeError, match="returned a coroutine"):
            system.spawn(make_echo)  # type: ignore[arg-type]


class StopsItsParent(Actor):
    def receive(self, message: Any) -> Any:
        self.context.parent.stop()  # a top-level actor's parent: the guardian


async def test_stopping_the_guardian_stops_the_system_as_system_stop_does() -> None:
    # lookup("/user") and a top-level actor's context.parent are the
    # guardian's ref: its stop() stopped every actor but left the body
    # running (sleep_forever here) with a system that could do nothing.
    async with ActorSystem() as system:
        ref = system.spawn(StopsItsParent)
        ref.tell("stop")
        with anyio.fail_after(5):
            await anyio.sleep_forever()
    assert not system.running
    assert await ref.join() is StopReason.SYSTEM
    async with ActorSystem() as system:
        system.lookup("/user").stop()
        with anyio.fail_after(5):
            await system.wait_exited()


class Counts(Actor):
    def __init__(self) -> None:
        self.handled = 0

    def receive(self, message: Any) -> Any:
        self.handled += 1
        return self.context.path


async def test_a_factory_returning_another_actors_instance_is_refused() -> None:
    # spawn_pool(lambda: instance, 3) made three workers of one instance:
    # each answered as the last one made, with their state shared.
    async with ActorSystem() as system:
        shared = Counts()
        with pytest.raises(TypeError, match="new instance at each call"):
            system.spawn_pool(lambda: shared, 3)
        instance = Counts()
        first = system.spawn(lambda: instance, name="first")
        with pytest.raises(TypeError, match="the instance of /user/first"):
            system.spawn(lambda: instance, name="second")
        assert await first.ask("who") == "/user/first"
        first.stop()
        await first.join()
        # Nor once its actor has ended: its leftovers (behaviour, stash)
        # would carry over into the new actor.
        with pytest.raises(TypeError, match="the instance of /user/first"):
            system.spawn(lambda: instance, name="again")


# -- pools ----------------------------------------------------------------------


class Quits(Actor):
    def receive(self, message: Any) -> Any:
        if message == "bad":
            raise ValueError("bad input")
        if message == "quit":
            self.context.stop()
        return message


@pytest.mark.parametrize("routing", ["round_robin", "shared_queue"])
@pytest.mark.parametrize("how", ["bad", "quit"])
async def test_a_pool_whose_workers_all_ended_stops_instead_of_holding_messages(
    routing: Routing, how: str
) -> None:
    # With every worker stopped for good (its strategy said STOP, or each
    # stopped itself), the pool held what it was told for workers that never
    # came: tells vanished, asks timed out, watchers never heard of it. It
    # stops now, as an Akka router does when its last routee ends.
    strategy = OneForOne(decider={ValueError: Directive.STOP}, log_failures=False)
    async with ActorSystem() as system:
        pool = system.spawn_pool(Quits, 2, routing=routing, strategy=strategy)
        for _ in range(2):
            with contextlib.suppress(ValueError):  # how == "bad"
                await pool.ask(how)
        with anyio.fail_after(5):
            assert await pool.join() is StopReason.NORMAL
        pool.tell("lost?")  # a dead letter to the pool, counted
        assert system.dead_letters.recent[-1].message == "lost?"
        with pytest.raises(ActorStopped):
            await pool.ask("lost?")


async def test_a_pool_with_one_worker_left_keeps_routing_to_it() -> None:
    strategy = OneForOne(decider={ValueError: Directive.STOP}, log_failures=False)
    async with ActorSystem() as system:
        pool = system.spawn_pool(Quits, 2, strategy=strategy)
        with pytest.raises(ValueError):
            await pool.ask("bad")
        await wait_all_blocked()
        assert pool.is_alive
        assert [await pool.ask(n) for n in range(3)] == [0, 1, 2]


class FailsSecond(Actor):
    def __init__(self, made: list[int]) -> None:
        made.append(len(made) + 1)
        if len(made) == 2:
            raise ValueError("the second worker")

    def receive(self, message: Any) -> Any:
        return message


async def test_a_pool_whose_first_workers_fail_frees_its_name_at_once() -> None:
    # As spawn does: a retry under the same name used to be "already has a
    # child named" until the refused pool's task had run and terminated.
    made: list[int] = []
    async with ActorSystem() as system:
        with pytest.raises(ValueError, match="second worker"):
            system.spawn_pool(FailsSecond, 3, made, name="pool")
        pool = system.spawn_pool(FailsSecond, 3, made, name="pool")
        assert await pool.ask("hi") == "hi"
        assert system.failures == 0 and system.restarts == 0
