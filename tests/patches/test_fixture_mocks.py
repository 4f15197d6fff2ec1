"""A fixture that replaces ``torch.cuda``'s API stands in for CUDA in the tests that take it,
wherever it is defined: the test module or a ``conftest.py`` above it (intent kind
``cuda-mocked``, round 35: liger-kernel's host-side configuration tests); a test that takes no
such fixture is rewritten."""

from __future__ import annotations

from patches.generate import pipeline
from patches.generate.state import Settings

CONFTEST = """\
import pytest
import torch


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)


@pytest.fixture
def runtime(fake_cuda):
    return {"device": "cuda:0"}
"""

TESTS = """\
import torch


def test_validates(runtime):
    assert runtime["device"] == str(torch.device("cuda:0"))


def test_runs():
    assert torch.zeros(1, device=torch.device("cuda:0")).sum() == 0
"""


def test_a_conftest_fixture_that_mocks_cuda_keeps_its_tests_devices(tmp_path):
    (tmp_path / "tests/unit").mkdir(parents=True)
    (tmp_path / "tests/conftest.py").write_text(CONFTEST)
    (tmp_path / "tests/unit/test_config.py").write_text(TESTS)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    after = run.plan.finals["tests/unit/test_config.py"]
    head, _, tail = after.partition("def test_runs")
    assert 'torch.device("cuda:0")' in head and '"cuda' not in tail
    assert "torch.accelerator.current_accelerator().type, 0" in tail
    left = [x for x in run.plan.left if x.finding.path == "tests/unit/test_config.py"]
    assert any("takes the fixture fake_cuda, which replaces" in x.reason for x in left), left
