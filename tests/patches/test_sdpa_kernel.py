"""The ``families/sdpa_kernel.py`` rewrite family (tests/patches/fixtures/sdpa_kernel/), and a
differential check of every flag combination: inside the rewritten ``with``, SDPA's four backend
switches read what they read inside the original ``torch.backends.cuda.sdp_kernel(...)``."""

from __future__ import annotations

import itertools
import warnings

import pytest

from tests.patches.codemod_helpers import fix
from tests.patches.family_fixtures import cases, check

_PARAMS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
_READ = (
    "state = (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled(), "
    "torch.backends.cuda.mem_efficient_sdp_enabled(), torch.backends.cuda.cudnn_sdp_enabled())"
)


@pytest.mark.parametrize("case", cases("sdpa_kernel"))
def test_fixture(case):
    check("sdpa_kernel", case)


def _state(source: str) -> tuple[bool, ...]:
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        exec(compile(source, "<flags>", "exec"), scope)
    return scope["state"]


def _calls():
    """Every combination of the four flags, by keyword (some left at their default) and by
    position."""
    for values in itertools.product((True, False, None), repeat=4):
        kw = ", ".join(f"{p}={v}" for p, v in zip(_PARAMS, values) if v is not None)
        yield kw
    for values in itertools.product((True, False), repeat=4):
        yield ", ".join(str(v) for v in values)


@pytest.mark.parametrize("args", list(_calls()))
def test_rewrite_enables_the_same_backends(args):
    src = f"import torch\nwith torch.backends.cuda.sdp_kernel({args}):\n    {_READ}\n"
    rw, _ = fix(src, path="benchmarks/flags.py")
    assert "sdp_kernel(" not in rw.after and "sdpa_kernel(" in rw.after, rw.after
    before = _state(src)
    assert _state(rw.after) == before
    assert _state(f"import torch\n{_READ}\n") == (True, True, True, True)  # restored on exit
