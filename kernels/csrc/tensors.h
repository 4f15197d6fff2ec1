// Device tensor <-> zero-copy CPU alias: the one trick every kernel of the backend relies on.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>

#include <string>
#include <vector>

namespace c10 {
class OperatorHandle;
}

#include "trn.h"

namespace trn {

inline bool is_trn(const at::Tensor& t) {
  return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1;
}

// A CPU storage over the bytes of a device storage. It holds a reference to the device storage,
// so CPU views made from it keep the device memory alive. A CPU kernel that grows it gets fresh
// CPU memory, which the caller then adopts back into the device storage.
c10::Storage cpu_storage_alias(const c10::Storage& device);

// A CPU tensor with t's sizes, strides, offset and conj/neg bits over `cpu_storage`
// (by default a fresh alias of t's storage).
at::Tensor cpu_alias(const at::Tensor& t, const c10::Storage& cpu_storage);
at::Tensor cpu_alias(const at::Tensor& t);

// A CPU alias of a dense device tensor for the length of one kernel call (fast.cpp), without
// allocating: each thread keeps one alias TensorImpl+StorageImpl per slot, rebound to the device
// storage when leased and unbound (device memory released) when the lease ends. While bound it
// holds the device storage like cpu_alias does. If anything still holds the pair when the lease
// ends (a CPU kernel kept it), the pair is left to its holders and the slot starts a new one;
// a slot already leased (re-entry) gives a plain cpu_alias.
class LeasedAlias {
 public:
  LeasedAlias(const at::Tensor& device_tensor, int slot);
  ~LeasedAlias();
  LeasedAlias(const LeasedAlias&) = delete;
  LeasedAlias& operator=(const LeasedAlias&) = delete;
  const at::Tensor& get() const { return alias_; }

 private:
  at::Tensor alias_;
  void* slot_ = nullptr;  // the thread's slot while pooled (nullptr: a plain cpu_alias)
};

// A device tensor with the metadata of `like` over `storage` (a device storage).
at::Tensor device_view(const at::Tensor& like, c10::Storage storage);

// A fresh CPU kernel output as a device tensor of `device`: its memory adopted without a copy
// into a new device storage, its metadata (and quantizer) kept by device_view.
at::Tensor adopt_as_device(const at::Tensor& out, c10::DeviceIndex device);

// Turns a fresh CPU kernel output into a device tensor of `device` in place (fast.cpp): when
// nothing but `out` holds its TensorImpl and nothing but that holds its CPU storage, the storage's
// memory is adopted as device memory and the TensorImpl's device and backend keys become trn's.
// No new storage, no new TensorImpl. Returns false (and changes nothing) otherwise.
bool adopt_in_place(const at::Tensor& out, c10::DeviceIndex device);

// The boxed fallback (fallback.cpp): runs `op`'s CPU kernel on CPU aliases of the trn arguments.
void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// The aten ops (`name.overload`) whose CUDA kernels check that all positional and out tensors
// are on one device (kernels/trn/device_check.py): the fallback refuses 0-dim cpu tensors there.
void set_device_checked_ops(const std::vector<std::string>& names);

// Registers the boxed fallback for every aten op whose PrivateUse1 slot would otherwise be
// filled by a CompositeExplicitAutograd(NonFunctional) kernel although CPU has a real one.
// Returns the number of ops registered. Idempotent.
int64_t claim_composite_ops();

} // namespace trn
