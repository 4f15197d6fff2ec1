// Extension point: unboxed kernels for the hottest elementwise ops (add/sub/mul/div, functional
// and in-place). They do what the boxed fallback does for these signatures, minus its generic
// work: no IValue stack, no walk over the schema, no output search. Anything unusual (mixed
// devices, a non-scalar cpu tensor, an in-place op on a cpu tensor) goes to the boxed fallback,
// which owns the error messages, so behaviour is the fallback's by construction.
#include "tensors.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/exp_ops.h>
#include <ATen/ops/gelu_backward_ops.h>
#include <ATen/ops/gelu_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/neg_ops.h>
#include <ATen/ops/relu_ops.h>
#include <ATen/ops/rsqrt_ops.h>
#include <ATen/ops/sigmoid_backward_ops.h>
#include <ATen/ops/sigmoid_ops.h>
#include <ATen/ops/silu_backward_ops.h>
#include <ATen/ops/silu_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/tanh_backward_ops.h>
#include <ATen/ops/tanh_ops.h>
#include <ATen/ops/threshold_backward_ops.h>
#include <torch/library.h>

#include <optional>
#include <type_traits>

namespace trn {

namespace {
constexpr c10::DispatchKeySet kCpuKeys(c10::DispatchKey::CPU);

bool cpu_scalar(const at::Tensor& t) { return t.is_cpu() && t.dim() == 0; }

c10::StorageImpl* storage_of(const at::Tensor& t) {
  return t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
}

// Whether CUDA takes a 0-dim cpu tensor beside device tensors for Op: `device_check: NoCheck` in
// native_functions.yaml (the arithmetic ops) or not (the structured *_backward ops, which then
// go to the fallback to be refused). test_device_speed checks these against the yaml.
template <class Op>
constexpr bool kScalarOperand =
    std::is_same_v<Op, at::_ops::add_Tensor> || std::is_same_v<Op, at::_ops::add__Tensor> ||
    std::is_same_v<Op, at::_ops::sub_Tensor> || std::is_same_v<Op, at::_ops::sub__Tensor> ||
    std::is_same_v<Op, at::_ops::mul_Tensor> || std::is_same_v<Op, at::_ops::mul__Tensor> ||
    std::is_same_v<Op, at::_ops::div_Tensor> || std::is_same_v<Op, at::_ops::div__Tensor>;

// CPU operands of a binary op: trn tensors on one device become aliases (leased ones, which
// cost no allocation; one shared alias storage when the two share a device storage, so the CPU
// kernel's overlap checks see it); 0-dim cpu tensors pass as they are where CUDA takes them
// (`scalar_ok`). `ok` is false for anything else. Leases are declared first so that they end last.
struct Operands {
  std::optional<LeasedAlias> lease_a, lease_b;
  at::Tensor self, other;
  c10::DeviceIndex device = -1;
  bool ok = true;

  Operands(const at::Tensor& a, const at::Tensor& b, bool self_on_device, bool scalar_ok) {
    bool ta = is_trn(a), tb = is_trn(b);
    if (ta && tb) {
      device = a.device().index();
      if (b.device().index() != device) {
        ok = false;
      } else if (storage_of(a) == storage_of(b)) {
        auto s = cpu_storage_alias(a.unsafeGetTensorImpl()->unsafe_storage());
        self = cpu_alias(a, s);
        other = cpu_alias(b, s);
      } else {
        self = lease_a.emplace(a, 0).get();
        other = lease_b.emplace(b, 1).get();
      }
    } else if (ta && scalar_ok && cpu_scalar(b)) {
      device = a.device().index();
      self = lease_a.emplace(a, 0).get();
      other = b;
    } else if (tb && scalar_ok && cpu_scalar(a) && !self_on_device) {
      device = b.device().index();
      self = a;
      other = lease_b.emplace(b, 1).get();
    } else {
      ok = false;
    }
  }
};

// A fresh CPU kernel output becomes device memory without a copy (the fallback's to_device for
// a result that views no argument), after the Trainium dtype check.
at::Tensor adopt_output(at::Tensor out, c10::DeviceIndex device, const char* op) {
  auto dtype = check_dtype(out.scalar_type(), op);
  if (dtype != out.scalar_type()) out = out.to(dtype);
  if (adopt_in_place(out, device)) return out;
  return adopt_as_device(out, device);
}

template <class Op, class... Args>
torch::jit::Stack boxed_fallback(Args&&... args) {
  static const c10::OperatorHandle handle =
      c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name);
  torch::jit::Stack stack;
  stack.reserve(sizeof...(Args));
  (stack.emplace_back(std::forward<Args>(args)), ...);
  fallback(handle, &stack);
  return stack;
}

// op(self, other, extra...) -> fresh tensor
template <class Op, class... Extra>
at::Tensor functional(const at::Tensor& self, const at::Tensor& other, Extra... extra) {
  Operands o(self, other, /*self_on_device=*/false, kScalarOperand<Op>);
  if (!o.ok) return boxed_fallback<Op>(self, other, extra...)[0].toTensor();
  return adopt_output(Op::redispatch(kCpuKeys, o.self, o.other, extra...), o.device, Op::name);
}

// op(self, extra...) -> fresh tensor, for ops whose CPU kernel always returns a fresh tensor
// (activations and pointwise math; their backwards are binary and use `functional`)
template <class Op, class... Extra>
at::Tensor unary(const at::Tensor& self, Extra... extra) {
  if (!is_trn(self)) return boxed_fallback<Op>(self, extra...)[0].toTensor();
  at::Tensor out;
  {
    LeasedAlias alias(self, 0);
    out = Op::redispatch(kCpuKeys, alias.get(), extra...);
  }
  return adopt_output(std::move(out), self.device().index(), Op::name);
}

// op_(self, other, extra...) -> self, written in place on the device
template <class Op, class... Extra>
at::Tensor& inplace(at::Tensor& self, const at::Tensor& other, Extra... extra) {
  Operands o(self, other, /*self_on_device=*/true, kScalarOperand<Op>);
  if (!o.ok) {
    boxed_fallback<Op>(self, other, extra...);
    return self;
  }
  Op::redispatch(kCpuKeys, o.self, o.other, extra...);
  return self;
}

at::Tensor add(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  return functional<at::_ops::add_Tensor>(a, b, alpha);
}
at::Tensor& add_(at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  return inplace<at::_ops::add__Tensor>(a, b, alpha);
}
at::Tensor sub(const at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  return functional<at::_ops::sub_Tensor>(a, b, alpha);
}
at::Tensor& sub_(at::Tensor& a, const at::Tensor& b, const c10::Scalar& alpha) {
  return inplace<at::_ops::sub__Tensor>(a, b, alpha);
}
at::Tensor mul(const at::Tensor& a, const at::Tensor& b) { return functional<at::_ops::mul_Tensor>(a, b); }
at::Tensor& mul_(at::Tensor& a, const at::Tensor& b) { return inplace<at::_ops::mul__Tensor>(a, b); }
at::Tensor div(const at::Tensor& a, const at::Tensor& b) { return functional<at::_ops::div_Tensor>(a, b); }
at::Tensor& div_(at::Tensor& a, const at::Tensor& b) { return inplace<at::_ops::div__Tensor>(a, b); }
} // namespace

bool adopt_in_place(const at::Tensor& out, c10::DeviceIndex device) {
  auto* impl = out.unsafeGetTensorImpl();
  if (c10::raw::intrusive_ptr::use_count(impl) != 1 || !out.is_cpu() ||
      out.layout() != c10::kStrided || !impl->has_storage())
    return false;
  auto* s = impl->unsafe_storage().unsafeGetStorageImpl();
  if (c10::raw::intrusive_ptr::use_count(s) != 1 || s->device_type() != c10::DeviceType::CPU)
    return false;
  // book first: an OutOfMemoryError leaves the CPU tensor as it was
  auto dev = adopt_ptr(s->mutable_data_ptr(), s->nbytes(), device);
  s->set_data_ptr_noswap(std::move(dev));
  s->set_allocator(device_allocator(device));  // a later resize allocates on the device
  impl->set_storage_keep_dtype(impl->unsafe_storage());  // refreshes the TensorImpl's device
  impl->_change_backend_component_keys(trn_device(device));
  return true;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", TORCH_FN(add));
  m.impl("add_.Tensor", TORCH_FN(add_));
  m.impl("sub.Tensor", TORCH_FN(sub));
  m.impl("sub_.Tensor", TORCH_FN(sub_));
  m.impl("mul.Tensor", TORCH_FN(mul));
  m.impl("mul_.Tensor", TORCH_FN(mul_));
  m.impl("div.Tensor", TORCH_FN(div));
  m.impl("div_.Tensor", TORCH_FN(div_));
  // activations and their backwards (an MLP or transformer step runs one of each per layer)
  m.impl("relu", TORCH_FN(unary<at::_ops::relu>));
  m.impl("sigmoid", TORCH_FN(unary<at::_ops::sigmoid>));
  m.impl("tanh", TORCH_FN(unary<at::_ops::tanh>));
  m.impl("silu", TORCH_FN(unary<at::_ops::silu>));
  m.impl("exp", TORCH_FN(unary<at::_ops::exp>));
  m.impl("neg", TORCH_FN(unary<at::_ops::neg>));
  m.impl("sqrt", TORCH_FN(unary<at::_ops::sqrt>));
  m.impl("rsqrt", TORCH_FN(unary<at::_ops::rsqrt>));
  m.impl("gelu", TORCH_FN((unary<at::_ops::gelu, c10::string_view>)));
  m.impl("threshold_backward",
         TORCH_FN((functional<at::_ops::threshold_backward, const c10::Scalar&>)));
  m.impl("sigmoid_backward", TORCH_FN(functional<at::_ops::sigmoid_backward>));
  m.impl("tanh_backward", TORCH_FN(functional<at::_ops::tanh_backward>));
  m.impl("silu_backward", TORCH_FN(functional<at::_ops::silu_backward>));
  m.impl("gelu_backward", TORCH_FN((functional<at::_ops::gelu_backward, c10::string_view>)));
}

} // namespace trn
