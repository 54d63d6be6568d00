# Pykka: one thread per actor; ask() blocks the calling thread.
from typing import Any

import anyio
import anyio.to_thread
import pykka


class Counter(pykka.ThreadingActor):
    def __init__(self, start: int = 0) -> None:
        super().__init__()
        self.total = start

    def on_receive(self, message: Any) -> Any:
        if message["op"] == "add":
            self.total += message["n"]
            return None
        if message["op"] == "get":
            return self.total
        return None


def run() -> int:
    counter = Counter.start(10)
    try:
        counter.tell({"op": "add", "n": 5})
        total = counter.ask({"op": "get"}, timeout=1.0)
        assert isinstance(total, int)
        return total
    finally:
        counter.stop()


async def main() -> None:
    print("pykka counted", await anyio.to_thread.run_sync(run))


if __name__ == "__main__":
    anyio.run(main)
