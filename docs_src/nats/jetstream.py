"""The NATS client's JetStream API: a stream, publishing with an
acknowledgement (deduplication, a conditional append), direct gets, and a
key-value bucket with compare-and-set on revisions."""

import anyio

from actors.nats import (
    KeyExistsError,
    KeyValueConfig,
    StreamConfig,
    WrongLastSequenceError,
    connect,
    embedded_nats_server,
)


async def main() -> None:
    async with (
        embedded_nats_server(jetstream=True) as server,
        connect(server.url) as nc,
    ):
        js = nc.jetstream()
        await js.add_stream(StreamConfig("ORDERS", subjects=("orders.>",)))

        first = await js.publish("orders.42", b"created", msg_id="42-created")
        again = await js.publish("orders.42", b"created", msg_id="42-created")
        print(f"stored at {first.seq}; the retry is a duplicate: {again.duplicate}")

        # Only if orders.42's last message is still the one we saw.
        paid = await js.publish(
            "orders.42", b"paid", expected_last_subject_sequence=first.seq
        )
        try:
            await js.publish(
                "orders.42", b"cancelled", expected_last_subject_sequence=first.seq
            )
        except WrongLastSequenceError as exc:
            print(f"refused: error {exc.err_code}, last is {exc.last}")

        history = await js.get_msgs("ORDERS", "orders.42")
        print("orders.42:", [msg.data.decode() for msg in history])
        last = await js.get_msg("ORDERS", last_by_subject="orders.42")
        print(f"last: {last.data.decode()} at {last.seq} (paid at {paid.seq})")

        kv = await js.create_key_value(KeyValueConfig("settings", history=5))
        revision = await kv.create("colour", b"blue")
        try:
            await kv.create("colour", b"red")
        except KeyExistsError:
            print("colour exists already")
        await kv.update("colour", b"green", last=revision)
        entry = await kv.get("colour")
        print(f"colour = {entry.value.decode()} (revision {entry.revision})")


if __name__ == "__main__":
    anyio.run(main)
