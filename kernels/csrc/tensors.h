// Device tensor <-> zero-copy CPU alias: the one trick every kernel of the backend relies on.
#pragma once

#include <ATen/core/Tensor.h>

#include "trn.h"

namespace trn {

inline bool is_trn(const at::Tensor& t) {
  return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1;
}

// A CPU tensor over the same StorageImpl as `t`: same bytes, sizes, strides, conj/neg bits.
// Views of it share the device storage (so they keep it alive), and a resize made by a CPU
// kernel goes through the storage's own allocator, i.e. stays device memory.
at::Tensor cpu_alias(const at::Tensor& t);

// A device tensor with the metadata of `like` over `storage` (a device storage).
at::Tensor device_view(const at::Tensor& like, c10::Storage storage);

// A device tensor for a CPU kernel's fresh output, taking over its memory without a copy.
at::Tensor adopt_tensor(const at::Tensor& cpu, c10::DeviceIndex device);

// Registers the boxed fallback for every aten op whose PrivateUse1 slot would otherwise be
// filled by a CompositeExplicitAutograd(NonFunctional) kernel although CPU has a real one.
// Returns the number of ops registered. Idempotent.
int64_t claim_composite_ops();

} // namespace trn
