import pytest

# The mini project and the fixture corpus are inputs to the codemods, not tests to collect.
collect_ignore_glob = ["project/*", "fixtures/*"]


@pytest.fixture(autouse=True)
def _private_scan_cache(tmp_path_factory, monkeypatch):
    """The audit driver caches results under $XDG_CACHE_HOME: keep ours out of the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
