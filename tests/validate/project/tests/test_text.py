def test_unrelated_to_devices():
    assert "".join(["a", "b"]) == "ab"
