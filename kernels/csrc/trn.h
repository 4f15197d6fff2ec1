// Shared declarations of the `trn` native core. Every unit implements one extension point;
// this header is the only coupling between them.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Device.h>
#include <c10/core/Storage.h>

namespace trn {

// Upper bound on devices the runtime can address; the visible count is set from Python.
constexpr int kMaxDevices = 64;

// ---- guard.cpp (device count and per-thread current device) ----
c10::DeviceIndex device_count();
void set_device_count(int n);
c10::DeviceIndex current_device();
void set_current_device(c10::DeviceIndex index);
void check_device_index(c10::DeviceIndex index);
// Resolves -1 ("current") to a concrete index and validates it.
c10::DeviceIndex resolve(c10::DeviceIndex index);

// ---- allocator.cpp (device memory with per-device stats, pinned host memory) ----
// Device memory of one device; per-device so a storage's resize stays on its device.
c10::Allocator* device_allocator(c10::DeviceIndex index);
// c10::Device(PrivateUse1, index) without constructing (and validating) one per call.
const c10::Device& trn_device(c10::DeviceIndex index);
// Wraps memory the CPU kernel allocated as device memory of `index` without copying; the
// bytes are accounted like an allocation and released with the last reference.
c10::DataPtr adopt(c10::Storage cpu_storage, c10::DeviceIndex index);
// The same for the DataPtr of a CPU storage that is about to become a device storage in place:
// books `bytes` on `index` (OutOfMemoryError leaves `cpu` as it was), then takes `cpu` over.
c10::DataPtr adopt_ptr(c10::DataPtr& cpu, size_t bytes, c10::DeviceIndex index);
bool device_of_ptr(const void* ptr, c10::DeviceIndex* out);
c10::Allocator* pinned_allocator();
bool is_pinned(const void* ptr);
void set_capacity(c10::DeviceIndex index, int64_t bytes);
int64_t capacity(c10::DeviceIndex index);

// ---- generator.cpp (per-device generators wrapping a CPU Philox/MT engine) ----
const at::Generator& default_generator(c10::DeviceIndex index);
at::Generator new_generator(c10::DeviceIndex index);
// The CPU generator a CPU kernel must draw from for a trn generator.
at::Generator cpu_engine(const at::Generator& trn_gen);

// ---- policy.cpp (Trainium policies decided in kernels/trn/trainium.py) ----
// The dtype the device stores for `dtype` requested by `op`: raises TypeError (strict) or returns
// the fallback with a one-time warning (permissive) for dtypes the preset lacks.
c10::ScalarType check_dtype(c10::ScalarType dtype, const char* op);
// False for a dtype the preset lacks (torch.accelerator.get_device_capability reports the rest).
bool dtype_supported(c10::ScalarType dtype);
void set_dtype_policy(const std::vector<int>& dtypes, const std::vector<int>& fallbacks,
                      const std::vector<std::string>& messages, bool strict);
// Tells the stream observer (the opt-in sanitizer) about record/block/synchronize.
void notify_stream(const char* what, c10::DeviceIndex device, int64_t stream, const void* event);

} // namespace trn
