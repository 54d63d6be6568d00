"""At-least-once with dedup: a producer controller numbers each message and
resends it until the consumer's handler confirmed it; the consumer
controller hands each to the consumer once, in order, and asks for more."""

from dataclasses import dataclass

import anyio

from actors import Actor, ActorSystem
from actors.delivery import ConsumerController, Delivery, ProducerController


@dataclass(frozen=True)
class Order:
    item: str


class Shipping(Actor[Delivery[Order]]):
    def receive(self, delivery: Delivery[Order]) -> str:
        # Returning confirms the message; raising would get it here again.
        print(f"ship {delivery.message.item} (#{delivery.seq_nr})")
        return f"shipped {delivery.message.item}"


async def main() -> None:
    async with ActorSystem() as system:
        shipping = system.spawn(Shipping)
        consumer = ConsumerController.spawn(system, shipping, window=2)
        producer = await ProducerController.start(
            system, "orders", consumer=consumer.ref
        )
        for item in ("book", "lamp", "chair"):
            await producer.send(Order(item))  # waits for the consumer's demand
        print(await producer.ask(Order("desk")))  # the handler's return value
        await producer.wait_confirmed()
        print(f"confirmed up to #{producer.confirmed_seq_nr}")


if __name__ == "__main__":
    anyio.run(main)
