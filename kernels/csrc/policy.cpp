// Extension point: the two Trainium policies Python cannot apply itself (kernels/trn/trainium.py
// decides them). 1) The dtype check on every allocation and fallback output: a bitmask test when
// nothing is configured. 2) A stream observer: the guard reports record/block/synchronize so the
// opt-in stream sanitizer (kernels/trainium/sanitizer.py) sees waits made through torch.Stream/Event.
#include "trn.h"

#include <ATen/ops/_to_copy_native.h>
#include <pybind11/pybind11.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <mutex>
#include <set>
#include <string>

namespace trn {

namespace {
constexpr size_t kTypes = static_cast<size_t>(c10::ScalarType::NumOptions);
std::atomic<bool> g_dtype_active{false};
std::array<bool, kTypes> g_unsupported{};
std::array<c10::ScalarType, kTypes> g_fallback{};
std::array<std::string, kTypes> g_message{};  // "{op}" is replaced by the op name
bool g_strict = true;
std::mutex g_warn_mu;
std::set<std::pair<int, std::string>> g_warned;

std::atomic<bool> g_observer_active{false};
pybind11::object* g_observer = nullptr;  // leaked on purpose: no Python calls at exit
} // namespace

void set_dtype_policy(const std::vector<int>& dtypes, const std::vector<int>& fallbacks,
                      const std::vector<std::string>& messages, bool strict) {
  TORCH_CHECK(dtypes.size() == fallbacks.size() && dtypes.size() == messages.size(),
              "trn: set_dtype_policy needs one fallback and one message per dtype");
  g_dtype_active = false;
  g_unsupported.fill(false);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    TORCH_CHECK(dtypes[i] >= 0 && static_cast<size_t>(dtypes[i]) < kTypes, "trn: bad dtype ", dtypes[i]);
    g_unsupported[dtypes[i]] = true;
    g_fallback[dtypes[i]] = static_cast<c10::ScalarType>(fallbacks[i]);
    g_message[dtypes[i]] = messages[i];
  }
  g_strict = strict;
  g_dtype_active = !dtypes.empty();
}

c10::ScalarType check_dtype(c10::ScalarType dtype, const char* op) {
  if (!g_dtype_active.load(std::memory_order_relaxed)) return dtype;
  auto i = static_cast<size_t>(dtype);
  if (i >= kTypes || !g_unsupported[i]) return dtype;
  if (g_strict) {
    auto msg = g_message[i];
    auto at = msg.find("{op}");
    if (at != std::string::npos) msg.replace(at, 4, op);
    TORCH_CHECK_TYPE(false, msg);
  }
  {
    std::lock_guard<std::mutex> lock(g_warn_mu);
    if (g_warned.emplace(static_cast<int>(i), op).second)
      TORCH_WARN("trn: ", op, " downcasts ", dtype, " to ", g_fallback[i],
                 " (permissive dtype policy; the preset has no ", dtype, ")");
  }
  return g_fallback[i];
}

bool dtype_supported(c10::ScalarType dtype) {
  auto i = static_cast<size_t>(dtype);
  return !(g_dtype_active.load(std::memory_order_relaxed) && i < kTypes && g_unsupported[i]);
}

void set_stream_observer(pybind11::object fn) {
  g_observer_active = false;
  if (g_observer == nullptr) g_observer = new pybind11::object();
  *g_observer = std::move(fn);
  g_observer_active = !g_observer->is_none();
}

void notify_stream(const char* what, c10::DeviceIndex device, int64_t stream, const void* event) {
  if (!g_observer_active.load(std::memory_order_relaxed)) return;
  pybind11::gil_scoped_acquire gil;
  (*g_observer)(what, static_cast<int>(device), stream, reinterpret_cast<uintptr_t>(event));
}

namespace {
// Tensor.to() onto or within trn: checked here so the error names the op the user called
// (the allocation underneath would only say aten::empty_strided).
at::Tensor to_copy(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                   std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                   std::optional<bool> pin, bool non_blocking,
                   std::optional<c10::MemoryFormat> mf) {
  bool onto_trn = device.has_value() ? device->type() == c10::DeviceType::PrivateUse1
                                     : self.device().type() == c10::DeviceType::PrivateUse1;
  if (onto_trn) dtype = check_dtype(dtype.value_or(self.scalar_type()), "aten::_to_copy (Tensor.to)");
  return at::native::_to_copy(self, dtype, layout, device, pin, non_blocking, mf);
}
} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("_to_copy", to_copy); }

} // namespace trn
