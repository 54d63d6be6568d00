"""``TaskSpawner``: tasks started with the loop's own primitive, kept inside a
task group (structured concurrency without anyio's per-task handle)."""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import pytest

from actors.channel.lowlevel import current_async_library, task_spawner

pytestmark = pytest.mark.anyio

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


async def test_started_tasks_run_and_serve_waits_for_them_after_close() -> None:
    done: list[int] = []
    spawner = task_spawner(current_async_library())

    async def work(i: int) -> None:
        await anyio.sleep(0)
        done.append(i)

    async with anyio.create_task_group() as tg:
        await tg.start(spawner.serve)
        for i in range(5):
            spawner.start(work, i, None)
        spawner.close()
    assert sorted(done) == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError):
        spawner.start(work, 9, None)


async def test_a_task_runs_in_the_context_it_is_given() -> None:
    seen: list[str] = []
    spawner = task_spawner(current_async_library())

    async def read(_: None) -> None:
        seen.append(VAR.get())
        VAR.set("changed inside")

    context = contextvars.copy_context()
    context.run(VAR.set, "given")
    async with anyio.create_task_group() as tg:
        await tg.start(spawner.serve)
        spawner.start(read, None, context)
        spawner.start(read, None, None)  # a copy of the current one
        spawner.close()
    assert sorted(seen) == ["given", "unset"]
    assert VAR.get() == "unset"


async def test_cancelling_the_task_group_cancels_the_tasks_and_waits_for_them() -> None:
    ended: list[str] = []
    spawner = task_spawner(current_async_library())

    async def forever(_: None) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0)  # a shielded cleanup still runs
            ended.append("cleaned up")

    async with anyio.create_task_group() as tg:
        await tg.start(spawner.serve)
        for _ in range(3):
            spawner.start(forever, None, None)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert ended == ["cleaned up"] * 3


async def test_cancel_reaches_running_tasks_and_those_started_after() -> None:
    cancelled: list[int] = []
    spawner = task_spawner(current_async_library())

    async def waits(i: int) -> None:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(i)
            raise

    async with anyio.create_task_group() as tg:
        await tg.start(spawner.serve)
        spawner.start(waits, 1, None)
        await anyio.wait_all_tasks_blocked()
        spawner.cancel()
        spawner.start(waits, 2, None)
        spawner.close()
    assert sorted(cancelled) == [1, 2]


async def test_a_tasks_error_cancels_the_others_and_surfaces_from_the_group() -> None:
    spawner = task_spawner(current_async_library())
    cancelled: list[str] = []

    async def fails(_: None) -> None:
        await anyio.sleep(0)
        raise LookupError("boom")

    async def waits(_: None) -> None:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append("other")
            raise

    with pytest.raises(BaseException) as caught:
        async with anyio.create_task_group() as tg:
            await tg.start(spawner.serve)
            spawner.start(waits, None, None)
            spawner.start(fails, None, None)
            await anyio.sleep_forever()
    leaves: list[Any] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(caught.value)
    assert [type(e) for e in leaves] == [LookupError]
    assert cancelled == ["other"]
