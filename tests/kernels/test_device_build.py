"""The native core's build cache (issue 19): keyed on what the core depends on, not on the path
torch is reached through; locked against concurrent builds; a rebuild says why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from kernels.trn import build
from patches.validate import shadow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = (
    "import torch, kernels.trn\n"
    "from kernels.trn import build\n"
    "print(torch.__file__)\n"
    "print(build.last_load, torch.ones(2, device='trn').sum().item())\n"
)


def _run(code: str, *, pythonpath: str = ROOT, **env) -> subprocess.Popen:
    full = {k: v for k, v in os.environ.items() if k not in ("HN_TRN", "HN_TRN_NAME")}
    full.update(env, PYTHONPATH=pythonpath)
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _lib() -> str:
    return str(build.loaded_from / f"{build.NAME}.so")


def test_a_shadow_of_torch_reuses_the_built_core(tmp_path):
    """patches.validate imports torch through a tree of links with patched copies: same core."""
    lib, before = _lib(), os.stat(_lib()).st_mtime_ns
    dest = tmp_path / "shadow"
    shadow.build_shadow(shadow.installed_site(), dest, ["torch/utils/cpp_extension.py"])
    p = _run(PROBE, pythonpath=os.pathsep.join([str(dest), ROOT]))
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    torch_file, status = out.splitlines()
    assert torch_file.startswith(str(dest))  # the shadow really was the torch imported
    assert status == "cache 2.0", err
    assert "building" not in err
    assert os.stat(lib).st_mtime_ns == before


def _copy_cache(dest):
    dest.mkdir()
    for name in (f"{build.NAME}.so", build.STAMP):
        shutil.copy2(build.loaded_from / name, dest / name)


def test_a_build_in_progress_blocks_other_processes(tmp_path):
    """A second process waits for the lock instead of reading a half-written library."""
    cache = tmp_path / "cache"
    _copy_cache(cache)
    with build.locked(cache):
        p = _run(PROBE, HN_TRN_BUILD_DIR=str(cache))
        time.sleep(3)
        assert p.poll() is None, p.communicate()
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert out.splitlines()[-1] == "cache 2.0"


def test_a_stale_build_is_rebuilt_with_a_reason(tmp_path):
    cache = tmp_path / "cache"
    _copy_cache(cache)
    (cache / build.STAMP).write_text("0123456789abcdef\n")  # built from other sources
    p = _run(PROBE, HN_TRN_BUILD_DIR=str(cache), CXX="/nonexistent/c++")
    _, err = p.communicate(timeout=300)
    assert p.returncode != 0
    assert f"trn native core: building in {cache} (sources or torch build changed" in err
    assert err.strip().splitlines()[-1].endswith("C++ compiler '/nonexistent/c++' not found "
                                                 "on PATH (install g++ or set CXX)")  # fmt: skip


def test_the_cache_key_follows_the_sources(tmp_path, monkeypatch):
    csrc = tmp_path / "csrc"
    shutil.copytree(build.CSRC, csrc)
    monkeypatch.setattr(build, "CSRC", csrc)
    key = build.source_hash()
    (csrc / "ops.cpp").write_text((csrc / "ops.cpp").read_text() + "\n// edited\n")
    assert build.source_hash() != key


def test_a_build_from_a_shadow_compiles_against_the_real_torch_folders(tmp_path):
    """build.ninja records include/lib paths: a shadow's spelling of them made ninja rebuild
    every source in the shared cache folder, so builds use the folders the links point to."""
    from torch.utils import cpp_extension

    real = cpp_extension._TORCH_PATH
    dest = tmp_path / "shadow"
    shadow.build_shadow(shadow.installed_site(), dest, ["torch/utils/cpp_extension.py"])
    assert build.real_torch_dir(str(dest / "torch")) == os.path.realpath(real)
    saved = cpp_extension._TORCH_PATH
    cpp_extension._TORCH_PATH = str(dest / "torch")
    try:
        with build._real_torch_paths(cpp_extension):
            assert cpp_extension.include_paths()[0].startswith(os.path.realpath(real))
            assert cpp_extension.TORCH_LIB_PATH == os.path.join(os.path.realpath(real), "lib")
        assert cpp_extension._TORCH_PATH == str(dest / "torch")
    finally:
        cpp_extension._TORCH_PATH = saved
