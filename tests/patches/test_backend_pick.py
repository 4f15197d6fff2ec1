"""The ``families/backend_pick.py`` rewrite family: fixtures in torch's shapes and look-alike negatives
(tests/patches/fixtures/backend_pick/)."""

from __future__ import annotations

import pytest
import torch

from tests.patches.codemod_helpers import fix
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("backend_pick"))
def test_fixture(case):
    check("backend_pick", case)


def test_rewritten_pick_answers_what_the_cuda_one_did():
    """Without CUDA the CUDA pick said gloo; the rewritten one says the same here (and nccl on a
    CUDA machine, the device's own backend elsewhere)."""
    src = (
        "import torch\nimport torch.distributed as dist\n\n"
        'device_type = "cpu"\n'
        'backend_a = "nccl" if device_type == "cuda" else "gloo"\n'
        'backend_b = "nccl" if torch.cuda.is_available() else "gloo"\n'
    )
    rw, _ = fix(src, path="torch/testing/_internal/pick.py")
    assert '"nccl"' not in rw.after, rw.after
    ns: dict = {}
    exec(compile(rw.after, "pick.py", "exec"), ns)
    expected = "nccl" if torch.cuda.is_available() else "gloo"
    assert (ns["backend_a"], ns["backend_b"]) == ("gloo", expected)
