import math

import anyio

from actors.channel import create_memory_object_stream


async def main() -> None:
    send, receive = create_memory_object_stream[int](math.inf)
    sizes: list[int] = []

    async def produce() -> None:
        with send:  # closing it ends the receiver's loop
            for i in range(1000):
                send.send_nowait(i)  # a burst: no yield in between

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        async with receive:
            while True:
                try:
                    batch = await receive.receive_many(64)  # up to 64 per wake
                except anyio.EndOfStream:
                    break
                assert batch == list(range(sum(sizes), sum(sizes) + len(batch)))
                sizes.append(len(batch))
    print(f"received {sum(sizes)} items in order, in {len(sizes)} batches")
    print("largest batch:", max(sizes))


if __name__ == "__main__":
    anyio.run(main)
