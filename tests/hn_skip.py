"""The one way a test says "this machine cannot run me", and the hook that makes it count in CI.

``skip_environment(reason)`` skips with a marked reason. Under ``CI=true`` (or 1/yes) the hook
turns such a skip into a failure, unless ``HN_ALLOW_SKIP=1`` opts out; and CI refuses
``EXPECTTEST_ACCEPT`` (it would rewrite the snapshots instead of checking them). Loaded by tests/conftest.py
(and usable as ``-p hn_skip``).
"""

from __future__ import annotations

import os

import pytest

ENV_PREFIX = "environment could not build/run: "


def strict() -> bool:
    """CI set to true/1/yes and no HN_ALLOW_SKIP=1: environment skips are failures."""
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return ci and os.environ.get("HN_ALLOW_SKIP", "").strip() != "1"


def skip_environment(reason: str):
    """Skip because the environment lacks what the test needs (a failure under CI)."""
    pytest.skip(ENV_PREFIX + reason)


def pytest_configure(config):
    """Snapshots rewritten in CI would make every snapshot test pass: refuse that combination."""
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    if ci and os.environ.get("EXPECTTEST_ACCEPT"):
        raise pytest.UsageError(
            "EXPECTTEST_ACCEPT rewrites the snapshots instead of checking them; unset it in CI"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.skipped or hasattr(rep, "wasxfail") or not strict():
        return
    reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
    if ENV_PREFIX not in reason:
        return
    rep.outcome = "failed"
    rep.longrepr = (
        f"{reason}\nCI is set: a test skipped because the environment could not build or run "
        "what it needs is a failure here (HN_ALLOW_SKIP=1 accepts the skip)"
    )
