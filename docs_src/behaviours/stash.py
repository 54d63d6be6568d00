"""A store that answers queries only once it is loaded: what comes before is
stashed, and unstashed, in order, when loading is done."""

from typing import Any

import anyio

from actors import Actor, ActorSystem


class Store(Actor):
    def __init__(self) -> None:
        self.data: dict[str, int] = {}

    def receive(self, message: Any) -> Any:  # loading
        match message:
            case ("loaded", data):
                self.data = data
                self.become(self.ready)
                self.unstash_all()  # handled next, before newer messages
            case _:
                self.stash()  # an ask keeps its reply slot: answered later
        return None

    def ready(self, message: Any) -> Any:
        match message:
            case ("get", key):
                return self.data.get(key)
            case ("put", key, value):
                self.data[key] = value
        return None


async def main() -> None:
    async with ActorSystem() as system:
        store = system.spawn(Store)
        replies: list[Any] = []

        async def get(key: str) -> None:
            replies.append(await store.ask(("get", key)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(get, "a")  # stashed: the store is still loading
            await anyio.wait_all_tasks_blocked()
            store.tell(("put", "a", 2))  # stashed too, after the get
            store.tell(("loaded", {"a": 1}))
        # The get was stashed before the put: it saw the loaded value.
        assert replies == [1]
        assert await store.ask(("get", "a")) == 2


if __name__ == "__main__":
    anyio.run(main)
