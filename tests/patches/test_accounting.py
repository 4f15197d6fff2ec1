"""Every finding is fixed or left with a reason (``fixed + left == findings`` per rule), whether
the scanned root is a package or not; the scan and the codemod resolve imports alike
(``audits.resolve``). The bug this guards: ``from . import cuda; cuda.synchronize()`` next to
``torch.cuda.synchronize()`` in a package gave two findings, one fixed and one neither fixed
nor left."""

import shutil
from pathlib import Path

import pytest
import torch

from patches.generate import audit_io, pipeline
from patches.generate.cli import main
from patches.generate.state import Settings

MOD = "import torch\nfrom . import cuda\n\n\ndef f():\n    cuda.synchronize()\n    torch.cuda.synchronize()\n"


@pytest.mark.parametrize("root_is_package", [False, True])
def test_relative_cuda_import_is_fixed_like_the_absolute_one(tmp_path, capsys, root_is_package):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(MOD)
    root = pkg if root_is_package else tmp_path
    assert main([str(root), "--diff", "--select", "HN105"]) == 1
    out = capsys.readouterr()
    assert "HN105    before     2  fixed     2  left     0" in out.err, out.err
    assert "-    cuda.synchronize()\n" in out.out
    assert "-from . import cuda\n" in out.out  # left unused by the rewrite
    assert out.out.count("+    torch.accelerator.synchronize()\n") == 2


def _plan(root: Path):
    settings = Settings(root, unsafe_fixes=True, tree="t", series="s", devices="cpu")
    run = pipeline.read(settings)
    pipeline.scan(run, audit_io.scan_tree(root, list(run.audit.rules.values()), use_cache=False))
    return run.report, pipeline.plan(run).plan


def test_invariant_on_installed_torch_subset(tmp_path):
    """Bounded: torch/cuda, torch/amp and torch/backends (relative imports throughout), scanned
    once with the package itself as the root (prefix ``torch/``) and once from above it."""
    src = Path(torch.__file__).parent
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for sub in ("cuda", "amp", "backends"):
        shutil.copytree(src / sub, pkg / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for root in (pkg, tmp_path):
        report, plan = _plan(root)
        assert len(report.findings) > 50
        assert plan.unaccounted(report.findings) == []
        # the relative `from . import ...` names resolve as in the scan: cuda/__init__.py
        # imports its own submodules relatively and none of their uses is dropped (the intent
        # gate leaves them: torch/cuda/ implements CUDA itself, issue 20)
        mine = [x for x in plan.left if x.finding.path.endswith("cuda/__init__.py")]
        assert any(x.reason.startswith("cuda-owned-path") for x in mine), mine[:3]
        assert not [x for x in mine if x.reason == "no rewrite matched this site"]


def test_invariant_reports_a_dropped_finding(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    report, plan = _plan(tmp_path)
    assert plan.unaccounted(report.findings) == []
    plan.fixed.clear()
    assert plan.unaccounted(report.findings) == [
        "HN105: 1 findings, 0 fixed + 0 left (differs in a.py)"
    ]


def test_the_reasons_printed_add_up_to_the_findings_left(tmp_path, capsys):
    # a manual rule's finding (HN713's decorator) that another rule's rewrite removes is fixed,
    # and no reason line counts it left
    (tmp_path / "t.py").write_text(
        "import pytest\nimport torch\nfrom mylib import is_xpu_available\n\n\n"
        "@pytest.mark.skipif(not (torch.cuda.is_available() or is_xpu_available()), reason='x')\n"
        "def test_a():\n    pass\n\n\n"
        "def f():\n    torch.cuda.nvtx.range_start('a')\n"
    )
    assert main([str(tmp_path), "--diff", "--unsafe-fixes"]) == 1
    err = capsys.readouterr().err
    total = int(err.split(" findings fixed, ")[1].split(" left")[0])
    reasons = [ln for ln in err.splitlines() if ln.startswith("  left ")]
    assert total and sum(int(ln.split()[1].rstrip(":")) for ln in reasons) == total, err
