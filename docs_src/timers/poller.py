from dataclasses import dataclass

import anyio

from actors import Actor, ActorSystem


@dataclass
class Poll:
    pass


@dataclass
class GiveUp:
    pass


class Poller(Actor):
    def __init__(self, done: anyio.Event) -> None:
        self.done = done
        self.polls = 0

    def on_start(self) -> None:
        timers = self.context.timers
        timers.start_periodic("poll", Poll(), interval=0.01)  # seconds
        timers.start_single("give-up", GiveUp(), delay=10.0)

    def receive(self, message: Poll | GiveUp) -> None:
        match message:
            case Poll():
                self.polls += 1
                print(f"poll {self.polls}")
                if self.polls == 3:
                    # Cancelled timers never deliver, even if already queued.
                    self.context.timers.cancel_all()
                    self.done.set()
            case GiveUp():
                print("gave up")


async def main() -> None:
    done = anyio.Event()
    async with ActorSystem() as system:
        system.spawn(Poller, done, name="poller")
        await done.wait()
    print("no 'gave up': the single timer was cancelled")


if __name__ == "__main__":
    anyio.run(main)
