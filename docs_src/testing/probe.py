from dataclasses import dataclass

import anyio

from actors import Actor, ActorRef, ActorSystem
from actors.testing import TestProbe


@dataclass(frozen=True)
class Greet:
    name: str
    reply_to: ActorRef[str]


class Greeter(Actor):
    def receive(self, message: Greet) -> None:
        message.reply_to.tell(f"hello, {message.name}")


async def main() -> None:
    async with ActorSystem() as system:
        greeter = system.spawn(Greeter)
        probe = TestProbe[str](system, name="probe")

        greeter.tell(Greet("Ada", probe.ref))
        greeter.tell(Greet("Bob", probe.ref))
        print(await probe.expect_message("hello, Ada"))  # a value
        print(await probe.expect_message(str))  # a type
        await probe.expect_no_message(0.05)  # nothing else came

        # A failed expectation shows what the probe received.
        greeter.tell(Greet("Cy", probe.ref))
        try:
            await probe.expect_message("hello, Bob")
        except AssertionError as failure:
            print(failure)


if __name__ == "__main__":
    anyio.run(main)
