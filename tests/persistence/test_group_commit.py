"""Group commit: writes that arrive during a commit share the next batch; a
cancelled queued write is never committed; the lead is never lost."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from actors.persistence._group_commit import GroupCommit, Write
from actors.testing import wait_all_blocked

pytestmark = pytest.mark.anyio


class Recorder:
    """A commit function that records its batches and can hold one back."""

    def __init__(self) -> None:
        self.batches: list[list[Write]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()
        self.fail: BaseException | None = None

    def __call__(self, batch: list[Write]) -> None:
        self.batches.append(list(batch))
        self.entered.set()
        self.hold.wait(10)
        if self.fail is not None:
            raise self.fail
        for write in batch:
            write.result = id(write)


async def _held(recorder: Recorder) -> None:
    """Wait (off the loop) until a commit has entered and is held."""
    await anyio.to_thread.run_sync(recorder.entered.wait, 10)


async def test_a_lone_write_is_committed_at_once() -> None:
    recorder = Recorder()
    committer: GroupCommit[Write] = GroupCommit(recorder)
    write = Write()
    assert await committer.submit(write) == id(write)
    assert recorder.batches == [[write]]
    assert (committer.batches, committer.writes, committer.busy) == (1, 1, False)


async def test_writes_arriving_during_a_commit_share_the_next_batch() -> None:
    recorder = Recorder()
    recorder.hold.clear()
    committer: GroupCommit[Write] = GroupCommit(recorder)
    writes = [Write() for _ in range(11)]
    results: list[Any] = []

    async def submit(write: Write) -> None:
        results.append(await committer.submit(write))

    async with anyio.create_task_group() as tg:
        tg.start_soon(submit, writes[0])
        await _held(recorder)
        for write in writes[1:]:
            tg.start_soon(submit, write)
        await wait_all_blocked()
        recorder.hold.set()
    # (Trio runs new tasks in an order of its own: compare as sets.)
    assert [set(batch) for batch in recorder.batches] == [{writes[0]}, set(writes[1:])]
    assert sorted(results) == sorted(id(w) for w in writes)


async def test_writes_started_together_are_gathered_into_one_batch() -> None:
    recorder = Recorder()
    committer: GroupCommit[Write] = GroupCommit(recorder)
    writes = [Write() for _ in range(5)]
    async with anyio.create_task_group() as tg:
        for write in writes:
            tg.start_soon(committer.submit, write)
    assert [set(batch) for batch in recorder.batches] == [set(writes)]


async def test_a_batch_holds_at_most_max_batch_writes() -> None:
    recorder = Recorder()
    recorder.hold.clear()
    committer: GroupCommit[Write] = GroupCommit(recorder, max_batch=3)
    writes = [Write() for _ in range(8)]
    async with anyio.create_task_group() as tg:
        for write in writes:
            tg.start_soon(committer.submit, write)
        await _held(recorder)
        await wait_all_blocked()
        recorder.hold.set()
    # The first leader waits one scheduling round: the rest join its batch.
    assert [len(batch) for batch in recorder.batches] == [3, 3, 2]
    assert {w for batch in recorder.batches for w in batch} == set(writes)


async def test_a_cancelled_queued_write_is_not_committed() -> None:
    recorder = Recorder()
    recorder.hold.clear()
    committer: GroupCommit[Write] = GroupCommit(recorder)
    first, cancelled, last = Write(), Write(), Write()
    async with anyio.create_task_group() as tg:
        tg.start_soon(committer.submit, first)
        await _held(recorder)
        scope = anyio.CancelScope()

        async def doomed() -> None:
            with scope:
                await committer.submit(cancelled)

        tg.start_soon(doomed)
        await wait_all_blocked()
        tg.start_soon(committer.submit, last)
        await wait_all_blocked()
        scope.cancel()
        await wait_all_blocked()
        recorder.hold.set()
    assert recorder.batches == [[first], [last]]
    assert not cancelled.done


async def test_a_leader_cancelled_during_its_commit_finishes_and_hands_on() -> None:
    recorder = Recorder()
    recorder.hold.clear()
    committer: GroupCommit[Write] = GroupCommit(recorder)
    leader, follower = Write(), Write()
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def lead() -> None:
            with scope:
                await committer.submit(leader)

        tg.start_soon(lead)
        await _held(recorder)
        tg.start_soon(committer.submit, follower)
        await wait_all_blocked()
        scope.cancel()
        recorder.hold.set()
    assert recorder.batches == [[leader], [follower]]
    assert leader.done and follower.done and not committer.busy


async def test_a_commit_that_raises_fails_every_write_of_its_batch() -> None:
    recorder = Recorder()
    recorder.fail = OSError("disk on fire")
    committer: GroupCommit[Write] = GroupCommit(recorder)
    with pytest.raises(OSError, match="disk on fire"):
        await committer.submit(Write())
    recorder.fail = None
    assert await committer.submit(Write()) is not None  # the next one is fine


async def test_wait_idle_returns_once_everything_is_committed() -> None:
    recorder = Recorder()
    recorder.hold.clear()
    committer: GroupCommit[Write] = GroupCommit(recorder)
    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(committer.submit, Write())
        await _held(recorder)
        done = anyio.Event()

        async def idle() -> None:
            await committer.wait_idle()
            done.set()

        tg.start_soon(idle)
        await wait_all_blocked()
        assert not done.is_set()
        recorder.hold.set()
    assert done.is_set() and committer.writes == 3


# Each writer: (checkpoints before it submits, checkpoints after which it is
# cancelled or None).
writers = st.lists(
    st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 6))),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=40,
    phases=[phase for phase in Phase if phase != Phase.explain],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=writers, max_batch=st.integers(1, 4))
async def test_random_interleavings_commit_each_write_once_and_never_stall(
    plan: list[tuple[int, int | None]], max_batch: int
) -> None:
    recorder = Recorder()
    committer: GroupCommit[Write] = GroupCommit(recorder, max_batch=max_batch)
    writes = [Write() for _ in plan]
    outcome: dict[int, str] = {}

    async def writer(index: int, delay: int, cancel_after: int | None) -> None:
        for _ in range(delay):
            await anyio.lowlevel.checkpoint()
        with anyio.CancelScope() as scope:
            if cancel_after is not None:

                async def cancel() -> None:
                    for _ in range(cancel_after):
                        await anyio.lowlevel.checkpoint()
                    scope.cancel()

                tg.start_soon(cancel)
            await committer.submit(writes[index])
            outcome[index] = "committed"
            return
        outcome[index] = "cancelled"

    with anyio.fail_after(30):  # a stall would hang: fail instead
        async with anyio.create_task_group() as tg:
            for index, (delay, cancel_after) in enumerate(plan):
                tg.start_soon(writer, index, delay, cancel_after)
        await committer.wait_idle()
    committed = [write for batch in recorder.batches for write in batch]
    assert len(committed) == len(set(map(id, committed)))  # each at most once
    assert all(len(batch) <= max_batch for batch in recorder.batches)
    for index, write in enumerate(writes):
        if outcome[index] == "committed":
            assert write in committed and write.result == id(write)
        elif write not in committed:
            assert not write.done  # cancelled while queued: left nothing
    assert not committer.busy and not committer._queue
