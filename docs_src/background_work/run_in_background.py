"""Background work owned by an actor: its result comes back as a message,
and a stop of the actor cancels it."""

from typing import Any

import anyio

from actors import Actor, ActorSystem, Result


async def fetch(url: str) -> str:
    await anyio.sleep(0.01)  # stands for network I/O
    return f"<html from {url}>"


class Crawler(Actor):
    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.failures: list[str] = []

    def receive(self, message: Any) -> Any:
        match message:
            case ("crawl", url):
                self.context.run(
                    lambda: fetch(url), then=lambda result: ("fetched", url, result)
                )
            case ("fetched", url, Result() as result):
                if result.ok:
                    self.pages[url] = result.value
                else:
                    self.failures.append(url)
            case "pages":
                return sorted(self.pages)
        return None


async def main() -> None:
    async with ActorSystem() as system:
        crawler = system.spawn(Crawler)
        crawler.tell(("crawl", "https://example.org/a"))
        crawler.tell(("crawl", "https://example.org/b"))
        with anyio.fail_after(5):
            while len(await crawler.ask("pages")) < 2:
                await anyio.sleep(0.005)
        assert await crawler.ask("pages") == [
            "https://example.org/a",
            "https://example.org/b",
        ]


if __name__ == "__main__":
    anyio.run(main)
