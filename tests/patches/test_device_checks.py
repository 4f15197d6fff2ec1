"""The ``families/device_checks.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/device_checks/)."""

from __future__ import annotations

import pytest
import torch

from tests.patches.codemod_helpers import fix
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("device_checks"))
def test_fixture(case):
    check("device_checks", case)


def test_rewritten_check_runs_on_meta_without_an_accelerator():
    """A meta tensor is not on the CPU: the rewritten check must not reach the neutral
    synchronize where no accelerator exists (on CUDA it syncs, as before)."""
    src = (
        "import torch\n\n\n"
        "def sync_if_on_device(t):\n"
        "    if t.is_cuda:\n"
        "        torch.cuda.synchronize()\n"
        "    return t\n"
    )
    rw, _ = fix(src, path="torch/_dynamo/sync_helper.py")
    assert "is_cuda" not in rw.after, rw.after
    ns: dict = {}
    exec(compile(rw.after, "sync_helper.py", "exec"), ns)
    ns["sync_if_on_device"](torch.empty(2, device="meta"))
    ns["sync_if_on_device"](torch.empty(2))
