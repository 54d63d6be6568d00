"""anyio 3's ways of calling, kept for drop-in compatibility, warn as anyio 4's do."""

from __future__ import annotations

import anyio
import pytest

from actors.channel import create_memory_object_stream


@pytest.mark.parametrize(
    "create", [create_memory_object_stream, anyio.create_memory_object_stream]
)
def test_the_item_type_argument_warns_that_it_is_deprecated(create: object) -> None:
    with pytest.warns(DeprecationWarning, match="item_type argument has been "):
        send, receive = create(item_type=int)  # type: ignore[operator]
    send.close()
    receive.close()


def test_no_item_type_no_warning(recwarn: pytest.WarningsRecorder) -> None:
    send, receive = create_memory_object_stream[int](1)
    send.close()
    receive.close()
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
