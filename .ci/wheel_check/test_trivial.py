# A project that never uses anyio-actors: installing it must not break pytest.
def test_x() -> None:
    assert 1 + 1 == 2
