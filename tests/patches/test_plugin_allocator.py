"""A project that imports a device plugin whose allocator torch.accelerator's memory calls do not
reach (torch_npu) keeps ``torch.cuda``'s memory calls, in every file (intent kind
``plugin-allocator``, round 35: verl's and ms-swift's memory logs); the same code in a project
without the plugin is rewritten."""

from __future__ import annotations

from patches.generate import pipeline
from patches.generate.state import Settings

PLUGIN = """\
def is_npu_available():
    try:
        import torch_npu  # noqa: F401
    except ImportError:
        return False
    return True
"""

LOG = """\
import torch


def log_memory():
    return torch.cuda.memory_allocated(), torch.cuda.max_memory_reserved()


def flush():
    torch.cuda.empty_cache()
"""


def _run(tmp_path, with_plugin: bool):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/log.py").write_text(LOG)
    if with_plugin:
        (tmp_path / "pkg/device.py").write_text(PLUGIN)
    return pipeline.generate(Settings(tmp_path, unsafe_fixes=True))


def test_memory_calls_stay_where_the_project_runs_on_the_plugin(tmp_path):
    run = _run(tmp_path, with_plugin=True)
    assert (
        "pkg/log.py" not in run.plan.finals
        or "torch.accelerator" not in run.plan.finals["pkg/log.py"]
    )
    left = [x for x in run.plan.left if x.finding.path == "pkg/log.py"]
    assert len(left) == 3 and all("pkg/device.py imports torch_npu" in x.reason for x in left)


def test_memory_calls_are_rewritten_without_the_plugin(tmp_path):
    after = _run(tmp_path, with_plugin=False).plan.finals["pkg/log.py"]
    assert "torch.accelerator.memory_allocated()" in after
    assert "torch.accelerator.empty_cache()" in after
