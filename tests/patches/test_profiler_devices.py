"""The ``families/profiler_devices.py`` rewrite family (HN554): fixtures in the profiler's own
shapes and look-alike negatives (tests/patches/fixtures/profiler_devices/)."""

from __future__ import annotations

import pytest

from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("profiler_devices"))
def test_fixture(case):
    check("profiler_devices", case)


def test_explain_agrees_and_safe_mode_leaves_them(tmp_path):
    """The fixtures in one tree at their paths: ``--explain`` gives generate's decision for
    every finding in both modes, and the rule (``review``) rewrites nothing in safe mode."""
    from tests.patches.test_properties import FAMILY_FIXTURES, _check_tree, _fixture_tree

    files = [p for p in FAMILY_FIXTURES if p.parent.name == "profiler_devices"]
    assert len(files) >= 6, files
    _fixture_tree(tmp_path, files)
    safe, unsafe = _check_tree(tmp_path)
    mine = {s for s in unsafe if "HN554" in str(s)}
    assert len(mine) >= 8, unsafe
    assert not {s for s in safe if "HN554" in str(s)}, safe
