"""Find actors by path, by child name, and by a registered name."""

from typing import Any

import anyio

from actors import Actor, ActorNotFound, ActorSystem


class Store(Actor):
    def receive(self, message: Any) -> Any:
        return f"stored {message}"


class Shop(Actor):
    def on_start(self) -> None:
        self.context.spawn(Store, name="store")

    def receive(self, message: Any) -> Any:
        store = self.context.child("store")  # a ref, or None
        assert store is not None
        store.tell(message)
        return store.path


async def main() -> None:
    async with ActorSystem() as system:
        shop = system.spawn(Shop, name="shop")
        assert await shop.ask("apples") == "/user/shop/store"

        store = system.lookup("/user/shop/store")
        assert await store.ask("pears") == "stored pears"
        try:
            system.lookup("/user/shop/cellar")
            raise AssertionError("there is no cellar")
        except ActorNotFound as exc:
            assert "no actor" in str(exc)

        system.register("store", store)
        found = system.whereis("store")
        assert found == store
        # The registration ends with the actor.
        store.stop()
        await store.join()
        assert system.whereis("store") is None


if __name__ == "__main__":
    anyio.run(main)
