"""The ``families/probe_collapse.py`` rewrite family: fixtures in torch's shapes and look-alike
negatives (tests/patches/fixtures/probe_collapse/), and the probes it reads."""

from __future__ import annotations

import ast

import pytest

from patches.generate.codemods.families.probe_collapse import probe
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("probe_collapse"))
def test_fixture(case):
    check("probe_collapse", case)


@pytest.mark.parametrize(
    "src, want",
    [
        ("TEST_CUDA", ("cuda", "avail")),
        ("torch.xpu.is_available()", ("xpu", "avail")),
        ("torch.hpu.device_count() >= n + 1", ("hpu", "count >= n + 1")),
        ("TEST_MTIA and torch.mtia.device_count() < world", ("mtia", "both < world")),
        ("torch.cuda.is_available() and torch.cuda.device_count() > 1", ("cuda", "both > 1")),
        ("TEST_CUDA and torch.xpu.device_count() >= 2", None),  # two backends in one probe
        ("torch.cuda.is_available(0)", None),
        ("torch.cuda.device_count() >= 2 and TEST_CUDA", None),
        ("torch.foo.is_available()", None),
        ("TEST_CUDNN", None),
        ("is_xpu_available()", ("xpu", "avail")),  # a project's helper of another backend
        ("utils.is_torch_npu_available()", ("npu", "avail")),
        ("torch.backends.mps.is_available()", ("mps", "avail")),
        ("is_xpu_available(check_device=True)", None),
        ("is_flash_available()", None),
        ("is_cuda_available()", None),  # CUDA's own question is torch.cuda's
    ],
)
def test_probe(src, want):
    assert probe(ast.parse(src, mode="eval").body) == want
