"""Per-rule C++/CMake fixtures against inline snapshots (EXPECTTEST_ACCEPT=1 rewrites them).

Each fixture holds positives and look-alike negatives (the token in a comment, a string, a macro
body, a longer identifier, a declaration), so a snapshot pins both what is found and what is not.
"""

from expecttest import TestCase

from .conftest import render, scan_fixture


class TestFixtures(TestCase):
    def check(self, name: str) -> str:
        findings, errors = scan_fixture(name)
        self.assertEqual(errors, [])
        return render(findings)

    def test_hn801_cuda_branch(self):
        self.assertExpectedInline(
            self.check("hn801_cuda_branch.cpp"),
            """\
HN801 branch 4:1-6:7 `#ifdef USE_CUDA` branch, lines 4-6 -> - [manual]
HN801 branch 8:1-10:7 `#if defined(__CUDACC__) && !defined(USE_ROCM)` branch, lines 8-10 -> - [manual]
HN801 branch 12:1-14:7 `#ifndef C10_CUDA_NO_CMAKE_CONFIGURE_FILE` branch, lines 12-14 -> - [manual]
HN842 include 13:1-13:45 `#include <c10/cuda/impl/cuda_cmake_macros.h>`: a CUDA/ROCm header -> - [manual]
HN801 branch 20:1-23:7 `#if CUDA_VERSION >= 12000 && defined(__CUDA_ARCH__)` branch, lines 20-23 -> - [manual]""",
        )

    def test_hn802_rocm_branch(self):
        self.assertExpectedInline(
            self.check("hn802_rocm_branch.h"),
            """\
HN802 branch 4:1-6:7 `#if defined(USE_ROCM)` branch, lines 4-6 -> - [manual]
HN802 branch 10:1-12:7 `#elif defined(__HIP_PLATFORM_AMD__)` branch, lines 10-12 -> - [manual]
HN801 branch 14:1-16:7 `#if defined(__HIPCC__) || defined(__CUDACC__)` branch, lines 14-16 -> - [manual]""",
        )

    def test_hn803_else_arm(self):
        self.assertExpectedInline(
            self.check("hn803_else_arm.cpp"),
            """\
HN801 branch 2:1-3:28 `#ifdef USE_CUDA` branch, lines 2-3 -> - [manual]
HN803 branch 4:1-6:7 `#else` arm of `#ifdef USE_CUDA` (line 2), lines 4-6 -> - [manual]
HN802 branch 8:1-9:26 `#ifndef USE_ROCM` branch, lines 8-9 -> - [manual]
HN803 branch 10:1-11:26 `#elif defined(HIP_FAST)` arm of `#ifndef USE_ROCM` (line 8), lines 10-11 -> - [manual]
HN803 branch 12:1-14:7 `#else` arm of `#ifndef USE_ROCM` (line 8), lines 12-14 -> - [manual]
HN802 branch 16:1-17:7 `#if defined(USE_ROCM)` branch, lines 16-17 -> - [manual]
HN801 branch 18:1-19:7 `#elif defined(USE_CUDA)` branch, lines 18-19 -> - [manual]""",
        )

    def test_hn810_811_devicetype(self):
        self.assertExpectedInline(
            self.check("hn810_811_devicetype.cpp"),
            """\
HN810 gate 5:7-5:49 device-type comparison with `c10::DeviceType::CUDA` -> at::accelerator::isAccelerator [review]
HN810 gate 8:10-8:40 device-type comparison with `at::kCUDA` -> at::accelerator::isAccelerator [review]
HN860 gate 12:3-19:4 closed device list (switch): names CUDA, CPU; leaves out PrivateUse1 (and HIP, HPU, MAIA, MPS, MTIA, XPU); every other device type gets `default:` (a generic path: `return -1;`) -> - [manual]
HN810 gate 13:10-13:26 `case DeviceType::CUDA:` device-type switch arm -> at::accelerator::isAccelerator [review]
HN811 literal 23:42-23:51 hard-coded `at::kCUDA` device type -> at::getAccelerator [review]""",
        )

    def test_hn812_is_cuda(self):
        self.assertExpectedInline(
            self.check("hn812_is_cuda.cpp"),
            """\
HN812 call 3:7-3:21 `self.is_cuda()` CUDA-only device check -> at::accelerator::isAccelerator [review]
HN812 call 6:15-6:31 `other->is_cuda()` CUDA-only device check -> at::accelerator::isAccelerator [review]
HN812 call 11:30-11:39 `is_cuda()` CUDA-only device check -> at::accelerator::isAccelerator [review]
HN812 call 15:10-15:26 `impl_->is_cuda()` CUDA-only device check -> at::accelerator::isAccelerator [review]""",
        )

    def test_hn820_821_cuda_namespace(self):
        self.assertExpectedInline(
            self.check("hn820_821_cuda_namespace.cpp"),
            """\
HN820 reference 3:3-3:23 `c10::cuda::CUDAGuard` reference: use `c10::DeviceGuard` -> c10::DeviceGuard [review]
HN821 call 4:17-4:49 `at::cuda::getCurrentCUDAStream` call: use `at::accelerator::getCurrentStream` -> at::accelerator::getCurrentStream [review]
HN820 call 5:3-5:34 `c10::cuda::device_synchronize` call: use `at::accelerator::synchronizeDevice` -> at::accelerator::synchronizeDevice [review]
HN820 call 6:11-6:38 `c10::cuda::device_count` call: use `at::accelerator::deviceCount` -> at::accelerator::deviceCount [review]
HN820 call 7:3-7:48 `c10::cuda::CUDACachingAllocator::emptyCache` call: use `at::accelerator::emptyCache` -> at::accelerator::emptyCache [review]
HN820 call 8:13-8:59 `c10::cuda::CUDACachingAllocator::raw_alloc` call: no device-generic equivalent -> - [manual]
HN821 call 9:3-9:77 `at::cuda::blas::gemm` call: no device-generic equivalent -> - [manual]
HN822 reference 17:1-17:29 `using c10::cuda::CUDAStream` brings `c10::cuda::CUDAStream` into scope: its uses below are unqualified -> - [manual]
HN821 call 25:12-25:40 `at::cuda::getCurrentCUDAStream` call (written `cuda::` inside namespace at): use `at::accelerator::getCurrentStream` -> at::accelerator::getCurrentStream [review]""",
        )

    def test_hn830_831_dispatch(self):
        self.assertExpectedInline(
            self.check("hn830_831_dispatch.cpp"),
            """\
HN831 macro 4:1-6:2 `TORCH_LIBRARY_IMPL(..., CUDA, ...)` registers kernels for CUDA only -> - [manual]
HN831 macro 8:1-10:2 `TORCH_LIBRARY_IMPL(..., AutogradCUDA, ...)` registers kernels for CUDA only -> - [manual]
HN831 macro 12:1-12:46 `REGISTER_CUDA_DISPATCH` registers a CUDA/HIP-only stub kernel -> - [manual]
HN831 macro 13:1-13:45 `REGISTER_HIP_DISPATCH` registers a CUDA/HIP-only stub kernel -> - [manual]
HN830 literal 15:31-15:53 hard-coded `c10::DispatchKey::CUDA` dispatch key -> - [manual]
HN830 literal 15:72-15:95 hard-coded `DispatchKey::SparseCUDA` dispatch key -> - [manual]""",
        )

    def test_hn813_814_824_842_libtorch_app(self):
        self.assertExpectedInline(
            self.check("hn813_libtorch_app.cpp"),
            """\
HN842 include 3:1-3:35 `#include <ATen/cuda/CUDAContext.h>`: a CUDA/ROCm header -> - [manual]
HN842 include 4:1-4:26 `#include <cuda_runtime.h>`: a CUDA/ROCm header -> - [manual]
HN842 include 5:1-5:34 `#include "kernels/fused_adam.cuh"`: a CUDA/ROCm header -> - [manual]
HN824 call 8:24-8:51 `torch::cuda::is_available` call: no device-generic equivalent -> - [manual]
HN814 literal 8:54-8:62 `"cuda:0"` device string -> at::getAccelerator [review]
HN813 call 10:3-10:16 `model->cuda()` moves to CUDA only -> at::getAccelerator [review]
HN813 call 11:12-11:39 `torch::randn({8, 3}).cuda()` moves to CUDA only -> at::getAccelerator [review]
HN814 literal 12:17-12:23 `"cuda"` device string -> at::getAccelerator [review]
HN824 call 13:31-13:58 `torch::cuda::device_count` call: use `at::accelerator::deviceCount` -> at::accelerator::deviceCount [review]
HN824 call 14:3-14:29 `torch::cuda::synchronize` call: use `at::accelerator::synchronizeDevice` -> at::accelerator::synchronizeDevice [review]
HN824 call 15:3-15:34 `torch::cuda::manual_seed_all` call: no device-generic equivalent -> - [manual]""",
        )

    def test_hn823_runtime(self):
        self.assertExpectedInline(
            self.check("hn823_runtime.cpp"),
            """\
HN842 include 2:1-2:36 `#include <c10/cuda/CUDAException.h>`: a CUDA/ROCm header -> - [manual]
HN823 reference 4:55-4:67 `cudaStream_t` CUDA runtime name -> - [manual]
HN823 call 5:3-5:81 `C10_CUDA_CHECK(...)` CUDA error-check macro -> - [manual]
HN823 call 5:18-5:80 `cudaMemcpyAsync(...)` CUDA runtime call -> - [manual]
HN823 reference 5:47-5:71 `cudaMemcpyDeviceToDevice` CUDA runtime name -> - [manual]
HN823 call 6:3-6:47 `AT_CUDA_CHECK(...)` CUDA error-check macro -> - [manual]
HN823 call 6:17-6:46 `cudaStreamSynchronize(...)` CUDA runtime call -> - [manual]
HN823 reference 7:3-7:14 `cudaError_t` CUDA runtime name -> - [manual]
HN823 call 7:21-7:39 `cudaGetLastError(...)` CUDA runtime call -> - [manual]
HN823 reference 8:14-8:25 `cudaSuccess` CUDA runtime name -> - [manual]
HN823 call 9:5-9:35 `C10_CUDA_KERNEL_LAUNCH_CHECK(...)` CUDA error-check macro -> - [manual]""",
        )

    def test_hn843_kernel_code(self):
        self.assertExpectedInline(
            self.check("hn843_kernels.h"),
            """\
HN801 branch 3:1-11:7 `#ifdef __CUDACC__` branch, lines 3-11 -> - [manual]
HN843 build 5:1-5:11 `__global__`: a CUDA kernel (compiled by nvcc/hipcc only) -> - [manual]
HN843 build 6:3-6:13 `__shared__`: CUDA shared memory -> - [manual]
HN843 build 9:1-9:13 `__constant__`: CUDA constant memory -> - [manual]
HN843 build 10:16-10:26 `__global__`: a CUDA kernel (compiled by nvcc/hipcc only); in the body of macro `KERNEL` -> - [manual]""",
        )

    def test_hn860_closed_device_lists(self):
        # Only the HN860 lines: the same tokens' HN810/HN811/HN812 findings are pinned elsewhere.
        got = "\n".join(
            ln for ln in self.check("hn860_closed_lists.cpp").split("\n") if "HN860" in ln
        )
        self.assertExpectedInline(
            got,
            """\
HN860 gate 6:7-10:38 closed device list (list): names CPU, CUDA, MPS, HIP, XPU; leaves out PrivateUse1 (and HPU, MAIA, MTIA) -> - [manual]
HN860 gate 15:3-23:4 closed device list (switch): names CUDA, HIP, XPU; leaves out PrivateUse1 (and HPU, MAIA, MPS, MTIA); every other device type gets `default:` (an error: `TORCH_CHECK(false, "warp_size: unsupported device ", t);`) -> - [manual]
HN860 gate 28:7-28:52 closed device list (chain): names CUDA, XPU, MPS; leaves out PrivateUse1 (and HIP, HPU, MAIA, MTIA) -> - [manual]
HN860 gate 31:10-31:42 closed device list (chain): names CUDA, MTIA; leaves out PrivateUse1 (and HIP, HPU, MAIA, MPS, XPU) -> - [manual]
HN860 gate 34:54-34:85 closed device list (list): names CPU, CUDA, XPU; leaves out PrivateUse1 (and HIP, HPU, MAIA, MPS, MTIA) -> - [manual]
HN860 gate 35:22-36:55 closed device list (chain): names CUDA, XPU; leaves out PrivateUse1 (and HIP, HPU, MAIA, MPS, MTIA) -> - [manual]""",
        )

    def test_hn840_cuda_only_files(self):
        got = "\n".join(
            f"{n}: {self.check(n) or '(none)'}"
            for n in (
                "hn840_kernel.cu",
                "hn840_guarded.h",
                "hn840_not_guarded.h",
                "hn840_negated.h",
            )
        )
        self.assertExpectedInline(
            got,
            """\
hn840_kernel.cu: HN840 build 1:1-5:2 CUDA-only file (.cu) -> - [manual]
HN843 build 2:1-2:11 `__global__`: a CUDA kernel (compiled by nvcc/hipcc only) -> - [manual]
hn840_guarded.h: HN840 build 1:1-13:30 whole file is under `#if defined(USE_CUDA)` (line 6) -> - [manual]
HN801 branch 6:1-11:7 `#if defined(USE_CUDA)` branch, lines 6-11 -> - [manual]
HN842 include 7:1-7:26 `#include <cuda_runtime.h>`: a CUDA/ROCm header -> - [manual]
hn840_not_guarded.h: HN801 branch 5:1-7:7 `#ifdef USE_CUDA` branch, lines 5-7 -> - [manual]
hn840_negated.h: HN801 branch 3:1-5:7 `#ifndef USE_CUDA` branch, lines 3-5 -> - [manual]""",
        )

    def test_hn850_852_cmake(self):
        self.assertExpectedInline(
            self.check("CMakeLists.txt"),
            """\
HN850 build 2:1-2:31 `option(USE_CUDA ...)` build switch -> - [manual]
HN850 build 3:1-5:30 `cmake_dependent_option(USE_NCCL ...)` build switch -> - [manual]
HN851 branch 8:1-9:33 `if(USE_CUDA)` branch on USE_CUDA, lines 8-9 -> - [manual]
HN851 branch 10:1-11:33 `elseif(USE_ROCM)` branch on USE_ROCM, lines 10-11 -> - [manual]
HN852 branch 12:1-14:8 `else()` arm of `if(USE_CUDA)` (line 8), lines 12-14 -> - [manual]
HN851 branch 21:3-23:10 `if(USE_NCCL AND BUILD_DIST)` branch on USE_NCCL, lines 21-23 -> - [manual]""",
        )


def test_suppression_semantics_match_the_python_scanner():
    """Ids, id prefixes and rule names suppress on the finding's first line; a bare `hn: ignore`
    and a suppression text inside a string literal do not."""
    from audits.cpp_scan import scan_source

    from .conftest import CPP_RULES

    src = (
        b"bool a = t.is_cuda();  // hn: ignore[HN812]\n"
        b"bool b = t.is_cuda();  // hn: ignore[HN8]\n"
        b"bool c = t.is_cuda();  /* hn: ignore[is-cuda-check] */\n"
        b"bool d = t.is_cuda();  // hn: ignore\n"
        b'bool e = t.is_cuda(); const char* s = "// hn: ignore[HN812]";\n'
        b"bool f = t.is_cuda();  // hn: ignore[HN801]\n"
    )
    findings, _ = scan_source(src, "s.cpp", CPP_RULES)
    assert [f.line for f in findings] == [4, 5, 6]
