"""CUDA sources and the places the plain C++ parse used to lose: `.cu` launch syntax and
qualifiers, `#define` bodies, using-declarations, and regions tree-sitter cannot structure."""

from __future__ import annotations

from expecttest import TestCase

from audits.cpp.cuda_syntax import as_cxx, launches
from audits.cpp.cxx import parse
from audits.cpp_scan import scan_source

from .conftest import CPP_RULES, FIXTURES, render, scan_fixture


class TestCudaSources(TestCase):
    def check(self, name: str) -> str:
        findings, errors = scan_fixture(name)
        self.assertEqual(errors, [])
        return render(findings)

    def test_cu_file_in_aten_shapes(self):
        # Launches (plain and on an explicit stream), the stream query inside a launch
        # configuration, registration; the look-alikes (a launch in a comment and a string, a
        # `>>>` closing nested templates, a using-declaration in a .cu file) are not reported.
        self.assertExpectedInline(
            self.check("hn84x_fill_kernel.cu"),
            """\
HN840 build 1:1-56:26 CUDA-only file (.cu) -> - [manual]
HN842 include 3:1-3:35 `#include <ATen/cuda/CUDAContext.h>`: a CUDA/ROCm header -> - [manual]
HN842 include 5:1-5:36 `#include <c10/cuda/CUDAException.h>`: a CUDA/ROCm header -> - [manual]
HN843 build 11:1-11:11 `__global__`: a CUDA kernel (compiled by nvcc/hipcc only) -> - [manual]
HN843 build 12:3-12:13 `__shared__`: CUDA shared memory -> - [manual]
HN823 reference 26:3-26:15 `cudaStream_t` CUDA runtime name -> - [manual]
HN821 call 26:25-26:57 `at::cuda::getCurrentCUDAStream` call: use `at::accelerator::getCurrentStream` -> at::accelerator::getCurrentStream [review]
HN841 call 28:5-29:75 `fill_kernel<scalar_t><<<grid, block, 0, stream>>>` CUDA kernel launch -> - [manual]
HN823 call 30:5-30:35 `C10_CUDA_KERNEL_LAUNCH_CHECK(...)` CUDA error-check macro -> - [manual]
HN810 gate 32:7-32:36 device-type comparison with `kCUDA` -> at::accelerator::isAccelerator [review]
HN841 call 33:5-34:25 `fill_kernel<float><<<1, 1, 0, at::cuda::getCurrentCUDAStream(iter.device().index())>>>` CUDA kernel launch -> - [manual]
HN821 call 33:35-33:88 `at::cuda::getCurrentCUDAStream` call: use `at::accelerator::getCurrentStream` -> at::accelerator::getCurrentStream [review]
HN831 macro 40:1-40:48 `REGISTER_DISPATCH` in a CUDA source registers a CUDA-only kernel -> - [manual]
HN820 reference 43:3-43:23 `c10::cuda::CUDAGuard` reference: use `c10::DeviceGuard` -> c10::DeviceGuard [review]
HN831 macro 47:1-49:2 `TORCH_LIBRARY_IMPL(..., CUDA, ...)` registers kernels for CUDA only -> - [manual]""",
        )

    def test_cu_syntax_parses_cleanly_once_rewritten(self):
        data = (FIXTURES / "hn84x_fill_kernel.cu").read_bytes()
        rewritten = as_cxx(data)
        assert len(rewritten) == len(data) and rewritten.count(b"\n") == data.count(b"\n")
        assert parse(data).root_node.has_error  # the raw CUDA syntax is not C++ ...
        assert not parse(rewritten).root_node.has_error  # ... the same-length rewrite is
        # Two launches in code, one in a comment, one in a string: the rewrite does not care
        # (comments and strings are never code to the detectors).
        assert len(launches(data)) == 4

    def test_macro_bodies(self):
        # Each body is parsed on its own; `#x` stringification does not derail it. Look-alikes:
        # a longer name, a stringified token, a comment inside a body, a macro's own name, #error.
        self.assertExpectedInline(
            self.check("hn8xx_macro_bodies.h"),
            """\
HN842 include 3:1-3:35 `#include <ATen/cuda/CUDAContext.h>`: a CUDA/ROCm header -> - [manual]
HN812 call 5:35-5:46 `x.is_cuda()` CUDA-only device check; in the body of macro `CHECK_CUDA` -> at::accelerator::isAccelerator [review]
HN841 call 8:3-9:14 `fill_kernel<T><<<blocks(n), 128, 0, at::cuda::getCurrentCUDAStream()>>>` CUDA kernel launch; in the body of macro `LAUNCH_FILL` -> - [manual]
HN821 call 8:39-8:71 `at::cuda::getCurrentCUDAStream` call: use `at::accelerator::getCurrentStream`; in the body of macro `LAUNCH_FILL` -> at::accelerator::getCurrentStream [review]
HN823 call 10:3-10:33 `C10_CUDA_KERNEL_LAUNCH_CHECK(...)` CUDA error-check macro; in the body of macro `LAUNCH_FILL` -> - [manual]
HN810 gate 12:21-12:65 device-type comparison with `c10::DeviceType::CUDA`; in the body of macro `ON_CUDA` -> at::accelerator::isAccelerator [review]
HN820 reference 13:20-13:42 `c10::cuda::compat::exp` reference: no device-generic equivalent; in the body of macro `compat_exp` -> - [manual]
HN820 call 15:3-15:79 `c10::cuda::CUDACachingAllocator::recordStream` call: no device-generic equivalent; in the body of macro `RECORD` -> - [manual]
HN823 call 26:26-26:40 `C10_CUDA_CHECK` CUDA error-check macro; in the body of macro `SYNC_OR_THROW` -> - [manual]
HN823 reference 26:41-26:62 `cudaStreamSynchronize` CUDA runtime name; in the body of macro `SYNC_OR_THROW` -> - [manual]
HN801 branch 27:1-28:7 `#ifdef C10_CUDA_CHECK` branch, lines 27-28 -> - [manual]""",
        )

    def test_using_declarations(self):
        got = "\n".join(
            f"{n}: {self.check(n) or '(none)'}" for n in ("hn822_using.h", "hn822_guarded.h")
        )
        self.assertExpectedInline(
            got,
            """\
hn822_using.h: HN842 include 3:1-3:33 `#include <c10/cuda/CUDAStream.h>`: a CUDA/ROCm header -> - [manual]
HN822 reference 6:1-6:39 `using c10::cuda::getCurrentCUDAStream` brings `c10::cuda::getCurrentCUDAStream` into scope: its uses below are unqualified -> - [manual]
HN822 reference 7:1-7:26 `using namespace at::cuda` brings the `at::cuda` namespace into scope: its uses below are unqualified -> - [manual]
HN822 reference 8:1-8:52 `using ::c10::cuda::CUDACachingAllocator::raw_alloc` brings `c10::cuda::CUDACachingAllocator::raw_alloc` into scope: its uses below are unqualified -> - [manual]
HN820 reference 10:23-10:43 `c10::cuda::CUDAGuard` reference: use `c10::DeviceGuard` -> c10::DeviceGuard [review]
HN822 reference 11:3-11:41 `using c10::cuda::CUDAGuard::CUDAGuard` inherits the constructors of `c10::cuda::CUDAGuard` -> - [manual]
hn822_guarded.h: HN840 build 1:1-9:7 whole file is under `#ifdef USE_CUDA` (line 3) -> - [manual]
HN801 branch 3:1-9:7 `#ifdef USE_CUDA` branch, lines 3-9 -> - [manual]
HN842 include 4:1-4:33 `#include <c10/cuda/CUDAStream.h>`: a CUDA/ROCm header -> - [manual]""",
        )

    def test_unstructured_region_falls_back_to_the_token(self):
        """A token whose statement tree-sitter could not structure is still reported, alone, and
        the finding says so; a declaration next to an error is not."""
        src = (
            b"void f(const Tensor& t) {\n"
            b"  bool b = t . is_cuda (;\n"
            b"}\n"
            b"struct S { bool is_cuda() const @@; };\n"
        )
        findings, errors = scan_source(src, "broken.cpp", CPP_RULES)
        assert errors == []
        self.assertExpectedInline(
            render(findings),
            """HN812 call 2:16-2:23 `is_cuda()` (token level: tree-sitter could not parse this region) -> at::accelerator::isAccelerator [review]""",
        )


def test_include_only_files_skip_the_parse_with_the_same_findings():
    """A file whose only tokens are #include lines is answered without tree-sitter; adding one
    code token forces the parse, and the include findings must not change."""
    from audits.cpp import cxx

    src = (
        b"#include <c10/cuda/CUDAGuard.h>\n"
        b'  #include "x/cuda_utils.h"  // hn: ignore[HN842]\n'
        b"#include <vector>\n"
        b"/* #include <cuda.h> */\n"
        b'const char* k = "#include <cudnn.h>";\n'
        b"#include <thrust/sort.h>\n"
    )
    parsed = []
    real = cxx.parse
    cxx.parse = lambda data: parsed.append(1) or real(data)
    try:
        alone, _ = scan_source(src, "a.cpp", CPP_RULES)
        assert parsed == []
        forced, _ = scan_source(src + b"bool b = t.is_cuda();\n", "a.cpp", CPP_RULES)
        assert parsed == [1]
    finally:
        cxx.parse = real
    assert [(f.rule, f.line, f.col, f.end_col, f.message) for f in alone] == [
        (f.rule, f.line, f.col, f.end_col, f.message) for f in forced if f.rule == "HN842"
    ]
    assert [f.line for f in alone] == [1, 6]
