from dataclasses import dataclass
from typing import Any

import anyio

from actors import Actor, ActorRef
from actors.testing import BehaviorTestKit, Spawned, TestInbox, TimerStarted


@dataclass(frozen=True)
class Job:
    n: int
    reply_to: ActorRef[int]


class Worker(Actor):
    def receive(self, message: Any) -> None: ...


class Dispatcher(Actor):
    """Hands each job to a new worker, counts them, reminds itself to report."""

    def __init__(self) -> None:
        self.jobs = 0

    def on_start(self) -> None:
        self.context.timers.start_periodic("report", "report", 60.0)

    def receive(self, message: Any) -> Any:
        if message == "count":
            return self.jobs
        if message == "report":
            self.context.parent.tell(f"{self.jobs} jobs so far")
            return None
        self.jobs += 1
        worker = self.context.spawn(Worker, name=f"worker-{message.n}")
        worker.tell(message)
        return None


async def main() -> None:
    # No event loop is needed: the kit runs handlers synchronously. (main is
    # async only to match the other examples.)
    kit = BehaviorTestKit(Dispatcher)
    print(kit.expect_effect(TimerStarted))

    client = TestInbox[int]("client")
    kit.run(Job(1, client.ref))
    spawned = kit.expect_effect(Spawned)
    print(spawned.name, spawned.factory.__name__)
    print(kit.child_inbox("worker-1").expect_message(Job) == Job(1, client.ref))

    print(kit.run("count"))  # the reply an asker would get
    kit.fire_timer("report")
    print(kit.parent_inbox.expect_message(str))
    kit.expect_no_effect()


if __name__ == "__main__":
    anyio.run(main)
