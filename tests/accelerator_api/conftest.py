"""The in-process autoport fixture (always uninstalled afterwards)."""

import pytest


@pytest.fixture
def ported(monkeypatch):
    """autoport installed in this process (target: CPU here), uninstalled afterwards."""
    from accelerator_api._port import RECORDER, install, uninstall

    monkeypatch.setenv("HN_AUTOPORT_QUIET", "1")
    RECORDER.clear()
    install()
    try:
        yield RECORDER
    finally:
        uninstall()
        RECORDER.clear()
