// Extension point: backend metadata in serialization (torch/csrc/jit/serialization/
// pickler_helper.h, `TensorBackendMetaRegistry`; PrivateUse1 is the one device type its allowlist
// admits). A vendor keeps per-tensor facts the strided description does not carry (a memory
// format tag, a version) in a `c10::BackendMeta` on the TensorImpl. trn keeps any boolean flags
// given to `torch._utils.set_tensor_metadata` (other than the `conj`/`neg` bits torch handles
// itself): `get_tensor_metadata` reports them, `torch.save` writes them next to the tensor
// (`_reduce_ex_internal` appends the metadata dict to the rebuild arguments) and `torch.load`
// restores them when the tensor lands on trn. Loaded to CPU (`map_location="cpu"`) they are
// dropped, as CPU has no backend metadata. Shallow copies and detach clone the BackendMeta
// (TensorImpl::copy_tensor_metadata); ops producing fresh tensors do not carry it (as OpenReg).
#include <ATen/core/Tensor.h>
#include <c10/core/TensorImpl.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>

#include <map>
#include <string>
#include <unordered_map>

namespace trn {
namespace {

struct Flags final : c10::BackendMeta {
  std::map<std::string, bool> flags;
  explicit Flags(std::map<std::string, bool> f) : flags(std::move(f)) {}
  c10::intrusive_ptr<c10::BackendMeta> clone(
      const c10::intrusive_ptr<c10::BackendMeta>& /*ptr*/) const override {
    return c10::make_intrusive<Flags>(flags);
  }
};

void get_flags(const at::Tensor& t, std::unordered_map<std::string, bool>& out) {
  auto* meta = dynamic_cast<Flags*>(t.unsafeGetTensorImpl()->get_backend_meta());
  if (meta == nullptr) return;
  for (const auto& [k, v] : meta->flags) out[k] = v;
}

void set_flags(const at::Tensor& t, std::unordered_map<std::string, bool>& in) {
  if (in.empty()) return;
  std::map<std::string, bool> flags(in.begin(), in.end());
  if (auto* meta = dynamic_cast<Flags*>(t.unsafeGetTensorImpl()->get_backend_meta()))
    for (const auto& [k, v] : meta->flags) flags.emplace(k, v);  // new values win
  t.unsafeGetTensorImpl()->set_backend_meta(c10::make_intrusive<Flags>(std::move(flags)));
}

struct Register {
  Register() {
    torch::jit::TensorBackendMetaRegistry(c10::DeviceType::PrivateUse1, &get_flags, &set_flags);
  }
} g_register;

} // namespace
} // namespace trn
