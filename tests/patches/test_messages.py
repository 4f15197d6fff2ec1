"""Commit messages say what the patch does: a patch that only guards a CUDA call (the
scheduling hint ``torch.cuda._sleep(100)`` kept CUDA's under ``torch.cuda.is_available()``)
does not claim the neutral API it never writes. Real generate, real git."""

from patches.common import gitutil
from patches.generate.cli import main

HINT = """import torch


def pipelined(group_size, produce, backend_stream):
    if group_size == 2:
        torch.cuda._sleep(100)
    produce()
"""

SYNC = """import torch


def fence():
    torch.cuda.synchronize()
"""


def _series(tmp_path, files):
    src = tmp_path / "src" / "pkg"
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).write_text(text)
    repo = gitutil.init_copy(tmp_path / "src", tmp_path / "repo")
    assert main([str(repo), "--out", str(tmp_path / "s"), "--unsafe-fixes"]) == 0
    return {p.name: p.read_text() for p in sorted((tmp_path / "s").glob("*.patch"))}


def test_a_guard_only_patch_says_it_guards(tmp_path):
    patches = _series(tmp_path, {"hint.py": HINT})
    (text,) = patches.values()
    assert "+    if group_size == 2 and torch.cuda.is_available():" in text
    assert (
        "Subject: [PATCH] [hw-neutral] Run torch.cuda._sleep only where CUDA is available" in text
    )
    assert "Guard torch.cuda._sleep with torch.cuda.is_available()" in text
    assert "get_device_module" not in text


NVTX = """import torch


def main():
    torch.cuda.nvtx.range_push("step")
    print("work")
    torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main()
"""


def test_a_rule_whose_replacement_is_the_guard_says_it_guards(tmp_path):
    """HN116 (cuda-own-effect) keeps CUDA's NVTX range under ``torch.cuda.is_available()``:
    the subject says so rather than "Use torch.cuda.is_available" (torchani's tools)."""
    patches = _series(tmp_path, {"bench.py": NVTX})
    (text,) = patches.values()
    assert "+    if torch.cuda.is_available():" in text
    assert "only where CUDA is available in" in text
    assert "Use torch.cuda.is_available" not in text
    assert "Guard torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop with" in text


def test_a_rewrite_names_its_api(tmp_path):
    patches = _series(tmp_path, {"sync.py": SYNC})
    (text,) = patches.values()
    assert "[hw-neutral] Use torch.accelerator.synchronize in pkg" in text
    assert "Replace torch.cuda.synchronize with torch.accelerator.synchronize" in text


PROBES = """import torch
from torch.testing._internal.common_utils import TEST_CUDA, TEST_XPU


def needs_device(fn):
    if not (TEST_CUDA or TEST_XPU):
        return None
    return fn
"""


def test_a_collapsed_test_flag_is_named_by_what_the_patch_writes(tmp_path):
    patches = _series(tmp_path, {"probes.py": PROBES})
    text = "".join(patches.values())
    assert "+    if not torch.accelerator.is_available():" in text
    assert "TEST_ACCELERATOR" not in text  # the rule's own replacement is written nowhere
    assert "Use torch.accelerator.is_available in pkg" in text


def test_written_keeps_the_rule_name_where_the_patch_writes_it():
    from patches.generate.message import written

    flag = "torch.testing._internal.common_utils.TEST_ACCELERATOR"
    assert written(flag, ["    if TEST_ACCELERATOR:"]) == flag
    assert written(flag, ["    if torch.accelerator.is_available():"]) == (
        "torch.accelerator.is_available"
    )
    assert written("torch.Tensor.device", ["if x.device.type != 'cpu':"]) == "torch.Tensor.device"


def test_a_device_type_test_is_named_as_written():
    from patches.generate.message import written

    # HN505's replacement is torch.device; the patch writes a test against the CPU (round 28)
    assert written("torch.device", ['    if x.device.type != "cpu":']) == 'device.type != "cpu"'
    assert written("torch.device", ["    d = torch.device(kind)"]) == "torch.device"
    assert written("torch.Tensor.to", ["    y = x.to(device)"]) == "torch.Tensor.to"


def test_the_old_names_are_the_sites_own():
    from types import SimpleNamespace

    from patches.generate.message import display_old

    names = [f"torch.cuda.{n}" for n in ("memory_allocated", "max_memory_allocated", "a", "b")]
    names.append("torch.cuda.memory.max_memory_allocated")  # an alias: named once
    spec = SimpleNamespace(names=names)
    site = SimpleNamespace(source="peak = torch.cuda.max_memory_allocated() / 2**20")
    assert display_old(spec, [site]) == "torch.cuda.max_memory_allocated"
    nothing = SimpleNamespace(source="x = 1")
    assert display_old(spec, [nothing]) == ", ".join(names[:3]) + " (and 2 more)"


def test_a_configured_backend_default_is_named_by_the_table_it_reads():
    """lavis' ``args.dist_backend = "nccl"`` (round 31): the subject named
    ``get_default_backend_for_device``, which the patch does not call."""
    from patches.generate.message import written

    api = "torch.distributed.get_default_backend_for_device"
    table = "torch.distributed.Backend.default_device_backend_map"
    assert written(api, [f"    args.dist_backend = {table}.get(kind)"]) == table
    assert written(api, [f"    dist.init_process_group({api}(device))"]) == api
