"""C++/CMake through the shared driver: one run covers both languages, the cache replays C++
findings, bad files become errors and the summary counts per language and subsystem."""

from __future__ import annotations

import shutil

from audits.engine import Options, run_scan
from audits.languages import BY_NAME

from .conftest import CPP_RULES, FIXTURES


def _tree(tmp_path):
    root = tmp_path / "src"
    (root / "aten/src/ATen/native/cuda").mkdir(parents=True)
    (root / "c10/core").mkdir(parents=True)
    (root / "torch").mkdir()
    shutil.copy(FIXTURES / "hn840_kernel.cu", root / "aten/src/ATen/native/cuda/Add.cu")
    shutil.copy(FIXTURES / "hn810_811_devicetype.cpp", root / "c10/core/Device.cpp")
    shutil.copy(FIXTURES / "CMakeLists.txt", root / "CMakeLists.txt")
    (root / "torch/use.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (root / "c10/core/latin1.h").write_bytes(b"// caf\xe9\n#ifdef USE_CUDA\n#endif\n")
    return root


def test_one_run_covers_python_cpp_and_cmake_and_the_cache_replays_it(tmp_path):
    root = _tree(tmp_path)
    opts = Options(root=str(root), jobs=1, cache_dir=str(tmp_path / "cache"))
    cold = run_scan(opts)
    assert cold.languages == {"cpp": 2, "cmake": 1, "python": 1}
    assert [(e.path, e.reason) for e in cold.errors] == [("c10/core/latin1.h", "encoding")]
    by_lang = {f.language for f in cold.findings}
    assert by_lang == {"cpp", "cmake", "python"}
    subsystems = cold.counts("subsystem")
    # native: the .cu file (HN840) and its `__global__` (HN843); c10/core: HN810 x3, HN811, and
    # the CUDA/CPU switch as a closed device list (HN860)
    assert subsystems["aten/src/ATen/native"] == 2 and subsystems["c10/core"] == 5
    assert cold.counts("rule")["HN840"] == 1 and cold.counts("rule")["HN851"] == 3
    warm = run_scan(opts)
    assert warm.to_dict()["findings"] == cold.to_dict()["findings"]
    assert warm.errors == cold.errors


def test_select_and_language_filters_reach_the_cpp_scanner(tmp_path):
    root = _tree(tmp_path)
    rep = run_scan(
        Options(root=str(root), jobs=1, use_cache=False, select=["HN81"], languages=["cpp"])
    )
    assert set(rep.counts("rule")) == {"HN810", "HN811"} and rep.languages == {"cpp": 2}


def test_every_cpp_trigger_passes_the_registry_prefilter():
    """A macro or CMake variable lacking every prefilter token could never fire."""
    for r in CPP_RULES:
        lang = BY_NAME[r.language]
        words = (
            r.match.get("macros", []) + r.match.get("prefixes", []) + r.match.get("variables", [])
        )
        for w in words:
            assert lang.may_match(w.encode()), (r.id, w)
    assert BY_NAME["cpp"].may_match(b"int x;", "a/b.cuh")  # suffix alone suffices
