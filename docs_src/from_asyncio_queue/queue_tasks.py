# backends: asyncio, uvloop
# Before: worker tasks around an asyncio.Queue, written by hand.
import asyncio
import hashlib

import anyio


async def worker(queue: asyncio.Queue[bytes | None], results: list[str]) -> None:
    while True:
        data = await queue.get()
        try:
            if data is None:  # the sentinel: time to stop
                return
            results.append(hashlib.sha256(data).hexdigest()[:8])
        finally:
            queue.task_done()


async def main() -> None:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=100)
    results: list[str] = []
    workers = [asyncio.create_task(worker(queue, results)) for _ in range(4)]
    for i in range(100):
        await queue.put(f"job {i}".encode())
    for _ in workers:
        await queue.put(None)
    await asyncio.gather(*workers)  # a worker that raised takes its jobs along
    print(f"{len(results)} jobs done")


if __name__ == "__main__":
    anyio.run(main)
