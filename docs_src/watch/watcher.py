from dataclasses import dataclass

import anyio

from actors import Actor, ActorRef, ActorSystem, Terminated


@dataclass
class Job:
    name: str
    fail: bool = False


class Worker(Actor):
    def receive(self, message: Job) -> None:
        if message.fail:
            raise RuntimeError(f"{message.name} failed")
        self.context.stop()  # done: stop after this message


class Watcher(Actor):
    def __init__(self, done: anyio.Event) -> None:
        self.done = done
        self.left = 0
        self.ended: dict[str, object] = {}

    def receive(self, message: ActorRef[Job]) -> None:
        self.context.watch(message)  # exactly one Terminated when it ends
        self.left += 1

    def on_terminated(self, terminated: Terminated) -> None:
        self.ended[terminated.ref.name] = terminated.reason
        self.left -= 1
        if self.left == 0:
            for name, reason in sorted(self.ended.items()):
                print(f"{name} ended: {reason!r}")
            self.done.set()


async def main() -> None:
    done = anyio.Event()
    async with ActorSystem() as system:
        watcher = system.spawn(Watcher, done, name="watcher")
        ok = system.spawn(Worker, name="ok")
        flaky = system.spawn(Worker, name="flaky", restart="temporary")
        await watcher.ask(ok)  # ask: the watch is set when the reply comes
        await watcher.ask(flaky)
        ok.tell(Job("report"))
        flaky.tell(Job("upload", fail=True))  # temporary: never restarted
        await done.wait()
        print("join() says the same:", await flaky.join())


if __name__ == "__main__":
    anyio.run(main)
