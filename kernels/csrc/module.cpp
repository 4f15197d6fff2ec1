// The Python surface of the native core: only what kernels/trn/*.py needs; policy lives there.
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/extension.h>

#include "tensors.h"

namespace trn {
void set_stream_observer(pybind11::object fn);  // policy.cpp
void bind_memory_trace(py::module& m);           // memory_trace.cpp
}

namespace {
py::object default_generator(int index) {
  return py::reinterpret_steal<py::object>(
      THPGenerator_initDefaultGenerator(trn::default_generator(static_cast<c10::DeviceIndex>(index))));
}
} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Native core of the trn PrivateUse1 device (see docs/device.md).";
  trn::bind_memory_trace(m);
  m.def("max_devices", [] { return trn::kMaxDevices; });
  m.def("device_count", [] { return static_cast<int>(trn::device_count()); });
  m.def("set_device_count", &trn::set_device_count);
  m.def("current_device", [] { return static_cast<int>(trn::current_device()); });
  m.def("set_device", [](int i) { trn::set_current_device(static_cast<c10::DeviceIndex>(i)); });
  m.def("default_generator", &default_generator);
  m.def("set_capacity", [](int i, int64_t bytes) {
    trn::set_capacity(static_cast<c10::DeviceIndex>(i), bytes);
  });
  m.def("capacity", [](int i) { return trn::capacity(static_cast<c10::DeviceIndex>(i)); });
  m.def("claim_composite_ops", &trn::claim_composite_ops);
  m.def("set_device_checked_ops", &trn::set_device_checked_ops);
  m.def("set_dtype_policy", [](const std::vector<at::ScalarType>& dtypes,
                               const std::vector<at::ScalarType>& fallbacks,
                               const std::vector<std::string>& messages, bool strict) {
    std::vector<int> d, f;
    for (auto t : dtypes) d.push_back(static_cast<int>(t));
    for (auto t : fallbacks) f.push_back(static_cast<int>(t));
    trn::set_dtype_policy(d, f, messages, strict);
  });
  m.def("set_stream_observer", &trn::set_stream_observer);
  // A child forked after initialization: the next factory call (torch::utils::device_lazy_init)
  // asks torch.trn._lazy_init again, which refuses in a bad fork, as CUDA's does.
  m.def("require_device_init", [] {
    torch::utils::set_requires_device_init(c10::DeviceType::PrivateUse1, true);
  });
  m.def("is_pinned_ptr", [](uint64_t p) { return trn::is_pinned(reinterpret_cast<void*>(p)); });
}
