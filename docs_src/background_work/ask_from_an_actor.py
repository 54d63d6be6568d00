"""An actor asks another without waiting: the reply comes back as a message,
and the actor handles other messages meanwhile."""

from dataclasses import dataclass
from typing import Any

import anyio

from actors import Actor, ActorRef, ActorSystem, Request, Result


@dataclass
class Quote(Request[float]):
    symbol: str


@dataclass
class Priced:
    symbol: str
    result: Result[float]


class Exchange(Actor):
    def __init__(self, opened: anyio.Event) -> None:
        self.opened = opened

    async def receive(self, message: Quote) -> float:
        await self.opened.wait()  # slow to answer
        return 101.5


class Trader(Actor):
    def __init__(self, exchange: ActorRef[Any]) -> None:
        self.exchange = exchange
        self.prices: dict[str, float] = {}
        self.handled: list[str] = []

    def receive(self, message: Any) -> Any:
        match message:
            case "buy":
                # Returns at once; Priced(...) arrives later as a message.
                self.context.ask(
                    self.exchange,
                    Quote("ACME"),
                    timeout=5.0,
                    then=lambda result: Priced("ACME", result),
                )
            case Priced(symbol, result) if result.ok:
                self.prices[symbol] = result.value
            case Priced(symbol, result):
                self.handled.append(f"no price for {symbol}: {result.error!r}")
            case "prices":
                return dict(self.prices)
            case other:
                self.handled.append(other)
        return None


async def main() -> None:
    opened = anyio.Event()
    async with ActorSystem() as system:
        exchange = system.spawn(Exchange, opened)
        trader = system.spawn(Trader, exchange)
        trader.tell("buy")
        trader.tell("news")  # handled while the ask is in flight
        assert await trader.ask("prices") == {}
        opened.set()
        while not await trader.ask("prices"):
            await anyio.lowlevel.checkpoint()
        assert await trader.ask("prices") == {"ACME": 101.5}


if __name__ == "__main__":
    anyio.run(main)
