// Extension point: CompositeImplicitAutograd ops that pick an accumulate dtype by asking "is this
// CUDA?" (`toAccumulateType(t, /*is_cuda=*/input.is_cuda())`). On any other device that answers
// CPU's table, float32 -> float64, and the composite allocates a float64 tensor on trn, which the
// Trainium dtype policy refuses although the caller asked for float32. trn accumulates like CUDA
// (float32 for float32/bf16/fp16, policy.cpp): these kernels do what the composite does with
// CUDA's answer. They are registered for PrivateUse1 and AutogradPrivateUse1 alike, as a
// composite is, so autograd still differentiates the ops they call.
#include "tensors.h"

#include <ATen/AccumulateType.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/_batch_norm_impl_index_native.h>
#include <ATen/ops/clone.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

namespace trn {
namespace {

// Normalization.cpp's _batch_norm_impl_index: an input without elements returns a clone of it
// (scaled and shifted by weight[0]/bias[0]) and empty statistics in the accumulate dtype.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, int64_t> batch_norm_impl_index(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, bool training, double momentum, double eps,
    bool cudnn_enabled) {
  if (input.sym_numel() != 0)
    return at::native::_batch_norm_impl_index(input, weight, bias, running_mean, running_var,
                                              training, momentum, eps, cudnn_enabled);
  auto num_features = input.dim() > 1 ? input.size(1) : int64_t{1};
  auto reserve = at::empty({0}, input.options().dtype(at::kByte));
  auto options =
      input.options().dtype(at::toAccumulateType(input.scalar_type(), /*is_cuda=*/true));
  auto save_mean = at::empty({num_features}, options);
  auto save_invstd = at::empty({num_features}, options);
  auto out = input.clone();
  if (weight.has_value() && weight->defined()) out = out * (*weight)[0];
  if (bias.has_value() && bias->defined()) out = out + (*bias)[0];
  return {out, save_mean, save_invstd, reserve, 0};
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_batch_norm_impl_index", TORCH_FN(batch_norm_impl_index));
}
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_batch_norm_impl_index", TORCH_FN(batch_norm_impl_index));
}

} // namespace trn
