// Extension point: fused attention (SDPBackend::OVERRIDEABLE). scaled_dot_product_attention asks
// the PrivateUse1 slot of _fused_sdp_choice_stub which kernel to run; trn answers OVERRIDEABLE
// (Trainium has fused attention kernels), and _scaled_dot_product_fused_attention_overrideable
// (+ backward) are the flash-style blocked kernels of kernels/trn/attention.py. Cases those
// kernels do not cover (dropout, grouped-query broadcasting, nested tensors, not 4-D) get math.
#include "trn.h"

#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/transformers/attention.h>
#include <torch/library.h>

namespace trn {
namespace {
int64_t fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& /*mask*/, double dropout_p,
                         bool /*is_causal*/, std::optional<double> /*scale*/, bool enable_gqa) {
  bool ok = at::globalContext().userEnabledOverrideableSDP() && dropout_p == 0.0 && !enable_gqa &&
            !q.is_nested() && q.dim() == 4 && k.dim() == 4 && v.dim() == 4 &&
            q.size(0) == k.size(0) && q.size(1) == k.size(1) && k.size(0) == v.size(0) &&
            k.size(1) == v.size(1) && k.size(2) == v.size(2) && q.size(3) == k.size(3);
  return static_cast<int64_t>(ok ? at::SDPBackend::overrideable : at::SDPBackend::math);
}
} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("_fused_sdp_choice", fused_sdp_choice); }
} // namespace trn

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &trn::fused_sdp_choice)
} // namespace at::native
