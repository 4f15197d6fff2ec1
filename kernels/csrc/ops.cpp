// Extension point: directly registered operators — the minimal set a backend must own
// (factories, views, copies, resize, set_) plus the few where the generic route is wrong.
#include "tensors.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ops/_copy_from_and_resize_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_to_copy_ops.h>
#include <ATen/ops/copy.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_quantized.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/zero.h>
#include <ATen/quantized/QTensorImpl.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <cstring>

namespace trn {

namespace {
constexpr c10::DispatchKeySet kTrnKeys(c10::DispatchKey::PrivateUse1);
constexpr c10::DispatchKeySet kCpuKeys(c10::DispatchKey::CPU);

c10::DeviceIndex device_of(std::optional<c10::Device> d) {
  if (!d.has_value()) return current_device();
  TORCH_CHECK(d->type() == c10::DeviceType::PrivateUse1, "trn kernel got device ", *d);
  return resolve(d->index());
}

void check_plain(std::optional<c10::Layout> layout, std::optional<bool> pin) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided,
              "trn supports only strided tensors, got layout ", c10::layout_or_default(layout));
  TORCH_CHECK(!c10::pinned_memory_or_default(pin), "Only CPU tensors can be pinned");
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin, std::optional<c10::MemoryFormat> mf) {
  check_plain(layout, pin);
  return at::detail::empty_generic(size, device_allocator(device_of(device)), kTrnKeys,
                                   check_dtype(c10::dtype_or_default(dtype), "aten::empty"), mf);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
                         std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin) {
  check_plain(layout, pin);
  return at::detail::empty_strided_generic(size, stride, device_allocator(device_of(device)),
                                           kTrnKeys, check_dtype(c10::dtype_or_default(dtype),
                                                                 "aten::empty_strided"));
}

// The zero tensor autograd hands out has no memory: give it real zeros on the device.
at::Tensor efficientzerotensor(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin) {
  auto t = empty_memory_format(size, dtype, layout, device, pin, std::nullopt);
  at::_ops::zero_::call(t);
  return t;
}

void check_copy_device(const at::Tensor& t) {
  TORCH_CHECK(t.is_cpu() || is_trn(t), "trn can copy to and from cpu only, got ", t.device());
}

// Sub-byte quantized types pack several values per byte, and CPU's copy kernel has no case for
// them ("copy_kernel" not implemented for 'QUInt4x2', on cpu too). Between cpu and trn a copy of
// the same type and layout is a copy of the packed bytes, as CUDA's cross-device copy is a memcpy
// for same-dtype contiguous tensors; anything else goes to the CPU kernel and its error.
int sub_byte_bits(c10::ScalarType t) {
  return t == c10::kQUInt4x2 ? 4 : t == c10::kQUInt2x4 ? 2 : 0;
}

bool packed_copy(const at::Tensor& src, const at::Tensor& dst) {
  const int bits = sub_byte_bits(src.scalar_type());
  if (bits == 0 || !src.is_quantized() || !dst.is_quantized() ||
      dst.scalar_type() != src.scalar_type() || src.sizes() != dst.sizes() ||
      !src.is_contiguous() || !dst.is_contiguous() || src.storage_offset() != 0 ||
      dst.storage_offset() != 0)
    return false;
  const auto bytes = static_cast<size_t>((src.numel() * bits + 7) / 8);
  TORCH_CHECK(src.storage().nbytes() >= bytes && dst.storage().nbytes() >= bytes,
              "packed quantized copy: storage smaller than ", bytes, " bytes");
  at::get_qtensorimpl(dst)->set_quantizer_(at::get_qtensorimpl(src)->quantizer());
  if (bytes > 0) std::memcpy(dst.storage().mutable_data(), src.storage().data(), bytes);
  return true;
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  check_copy_device(self);
  check_copy_device(dst);
  if (packed_copy(self, dst)) return dst;
  auto src_cpu = is_trn(self) ? cpu_alias(self) : self;
  auto dst_cpu = is_trn(dst) ? cpu_alias(dst) : dst;
  // Straight to the CPU copy kernel, which handles dtype casts, broadcasting and conj/neg bits;
  // going through the dispatcher again would re-enter this kernel via Conjugate/Negative.
  at::_ops::copy_::redispatch(kCpuKeys, dst_cpu, src_cpu, non_blocking);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  at::native::resize_(dst, self.sizes(), std::nullopt);
  return copy_from(self, dst, false);
}

const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          std::optional<c10::MemoryFormat> mf) {
  // The CPU resize grows the storage through its allocator: our per-device one.
  return at::native::resize_(self, C10_AS_INTARRAYREF_SLOW(size), mf);
}

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, offset);
}

at::Tensor view(const at::Tensor& self, c10::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

void check_same_device(const at::Tensor& self, const c10::Storage& s) {
  TORCH_CHECK(s.device() == self.device(), "Attempted to set the storage of a tensor on device \"",
              self.device(), "\" to a storage on different device \"", s.device(), "\"");
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source) {
  check_same_device(self, source);
  return at::native::set_(self, source);
}

at::Tensor& set_storage_offset(at::Tensor& self, c10::Storage source, int64_t offset,
                               c10::IntArrayRef size, c10::IntArrayRef stride) {
  check_same_device(self, source);
  return at::cpu::set_(self, source, offset, size, stride);
}

// torch.load and deepcopy rebuild a quantized tensor as _empty_affine_quantized + set_(storage):
// QuantizedCPU's kernel on the trn tensor itself, the storage being a trn storage.
at::Tensor& set_storage_offset_quantized(at::Tensor& self, c10::Storage source, int64_t offset,
                                         c10::IntArrayRef size, c10::IntArrayRef stride) {
  check_same_device(self, source);
  return at::native::set_storage_quantized_(self, source, offset, size, stride);
}

at::Tensor& set_tensor(at::Tensor& self, const at::Tensor& source) {
  check_same_device(self, source.storage());
  return at::native::set_tensor_(self, source);
}

at::Tensor& set_empty(at::Tensor& self) {
  auto fresh = c10::Storage(c10::Storage::use_byte_size_t(), 0,
                            device_allocator(self.device().index()), /*resizable=*/true);
  return set_storage_offset(self, fresh, 0, {0}, {});
}

void record_stream(at::Tensor&, c10::Stream) {
  // Memory is never reused behind a stream's back (no caching), so nothing to record.
}
} // namespace

namespace {
void release_device_storage(void* ctx) {
  c10::raw::intrusive_ptr::decref(static_cast<c10::StorageImpl*>(ctx));
}
} // namespace

c10::Storage cpu_storage_alias(const c10::Storage& device) {
  auto* impl = device.unsafeGetStorageImpl();
  c10::raw::intrusive_ptr::incref(impl);
  c10::DataPtr ptr(impl->mutable_data(), impl, &release_device_storage,
                   c10::Device(c10::DeviceType::CPU));
  return c10::Storage(c10::Storage::use_byte_size_t(), impl->nbytes(), std::move(ptr),
                      c10::GetCPUAllocator(), /*resizable=*/true);
}

// A quantized tensor keeps its quantizer on either side: QTensorImpl with the Quantized key of
// the backend (QuantizedCPU alias, QuantizedPrivateUse1 device tensor) over the same bytes.
static c10::intrusive_ptr<c10::TensorImpl> impl_like(const at::Tensor& t, c10::Storage storage,
                                                     bool on_device) {
  if (t.is_quantized())
    return c10::make_intrusive<at::QTensorImpl>(
        std::move(storage),
        c10::DispatchKeySet(on_device ? c10::DispatchKey::QuantizedPrivateUse1
                                      : c10::DispatchKey::QuantizedCPU),
        t.dtype(), at::get_qtensorimpl(t)->quantizer());
  return c10::make_intrusive<c10::TensorImpl>(std::move(storage), on_device ? kTrnKeys : kCpuKeys,
                                              t.dtype());
}

at::Tensor cpu_alias(const at::Tensor& t, const c10::Storage& cpu_storage) {
  auto impl = impl_like(t, c10::Storage(cpu_storage), /*on_device=*/false);
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  if (t.is_conj()) impl->_set_conj(true);
  if (t.is_neg()) impl->_set_neg(true);
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) impl->set_wrapped_number(true);
  return at::Tensor(std::move(impl));
}

at::Tensor cpu_alias(const at::Tensor& t) { return cpu_alias(t, cpu_storage_alias(t.storage())); }

namespace {
constexpr int kLeaseSlots = 2;
struct LeaseSlot {
  c10::intrusive_ptr<c10::TensorImpl> impl;
  bool leased = false;
};
thread_local LeaseSlot g_lease_slots[kLeaseSlots];

// Whether a CPU kernel kept the alias (or its storage; weak references to a storage only a
// leased alias ever held are not looked for).
bool held_elsewhere(const c10::intrusive_ptr<c10::TensorImpl>& impl) {
  return impl.use_count() != 1 || impl.weak_use_count() != 1 ||
         impl->unsafe_storage().use_count() != 1;
}
const c10::Device kCpuDevice(c10::DeviceType::CPU);
} // namespace

LeasedAlias::LeasedAlias(const at::Tensor& t, int slot) {
  auto& s = g_lease_slots[slot];
  if (s.leased || t.is_quantized() || t.is_conj() || t.is_neg() ||
      t.unsafeGetTensorImpl()->is_wrapped_number()) {
    alias_ = cpu_alias(t);
    return;
  }
  auto* device = t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl();
  if (!s.impl) {
    auto storage = c10::Storage(c10::Storage::use_byte_size_t(), 0, c10::DataPtr(nullptr, kCpuDevice),
                                c10::GetCPUAllocator(), /*resizable=*/true);
    s.impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), kCpuKeys, t.dtype());
  }
  auto* impl = s.impl.get();
  auto* cpu = impl->unsafe_storage().unsafeGetStorageImpl();
  c10::raw::intrusive_ptr::incref(device);
  cpu->set_data_ptr_noswap(
      c10::DataPtr(device->mutable_data(), device, &release_device_storage, kCpuDevice));
  cpu->set_nbytes(device->nbytes());
  if (impl->dtype() != t.dtype()) impl->set_storage_and_dtype(impl->unsafe_storage(), t.dtype());
  // a loop calls the same shapes again and again: keep the computed layout flags then
  if (impl->sizes() == t.sizes() && impl->strides() == t.strides())
    impl->set_storage_offset(t.storage_offset());
  else
    impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  s.leased = true;
  slot_ = &s;
  alias_ = at::Tensor(s.impl);
}

LeasedAlias::~LeasedAlias() {
  alias_.reset();
  if (slot_ == nullptr) return;
  auto& s = *static_cast<LeaseSlot*>(slot_);
  s.leased = false;
  if (held_elsewhere(s.impl)) {
    s.impl.reset();  // its holders keep it, and through it the device memory
    return;
  }
  auto* cpu = s.impl->unsafe_storage().unsafeGetStorageImpl();
  cpu->set_data_ptr_noswap(c10::DataPtr(nullptr, kCpuDevice));
  cpu->set_nbytes(0);
}

at::Tensor device_view(const at::Tensor& like, c10::Storage storage) {
  auto impl = impl_like(like, std::move(storage), /*on_device=*/true);
  impl->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  if (like.is_conj()) impl->_set_conj(true);
  if (like.is_neg()) impl->_set_neg(true);
  return at::Tensor(std::move(impl));
}

at::Tensor adopt_as_device(const at::Tensor& out, c10::DeviceIndex device) {
  const auto& cpu = out.unsafeGetTensorImpl()->unsafe_storage();
  c10::Storage s(c10::Storage::use_byte_size_t(), cpu.nbytes(), adopt(cpu, device),
                 device_allocator(device), /*resizable=*/true);
  return device_view(out, std::move(s));
}

// nn.Module._apply swaps converted parameters in place (`param.data = new`, keeping tied
// weights tied) only when this says the two impls are interchangeable. c10's rule lists the
// in-tree dense backends but not PrivateUse1 (note above has_compatible_shallow_copy_type in
// c10/core/TensorImpl.h): dense strided CPU and trn tensors are as interchangeable as CPU and CUDA.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set())) return true;
  // c10's own dense test, with PrivateUse1 among the dense backends.
  auto dense = [](c10::DispatchKeySet ks) {
    constexpr auto backends = c10::DispatchKeySet(
        {c10::BackendComponent::CPUBit, c10::BackendComponent::PrivateUse1Bit});
    return ks.has_any(c10::DispatchKeySet(c10::DispatchKey::Dense)) && ks.has_any(backends);
  };
  return dense(self.key_set()) && dense(from.key_set());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
  m.impl("empty_strided", empty_strided);
  m.impl("_efficientzerotensor", efficientzerotensor);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("resize_", resize_);
  m.impl("as_strided", as_strided);
  m.impl("view", view);
  m.impl("_reshape_alias", reshape_alias);
  m.impl("set_.source_Storage", set_storage);
  m.impl("set_.source_Storage_storage_offset", set_storage_offset);
  m.impl("set_.source_Tensor", set_tensor);
  m.impl("set_", set_empty);
  m.impl("record_stream", record_stream);
}

// `.cpu()` / `.to(...)` of a quantized trn tensor: QuantizedCPU's _to_copy on the alias makes a
// fresh QuantizedCPU copy, which stays on cpu when asked for and is adopted as trn memory otherwise.
at::Tensor quantized_to_copy(const at::Tensor& self, std::optional<at::ScalarType> dtype,
                             std::optional<at::Layout> layout, std::optional<at::Device> device,
                             std::optional<bool> pin, bool non_blocking,
                             std::optional<at::MemoryFormat> mf) {
  const bool to_cpu = device.has_value() && device->is_cpu();
  auto d = self.device().index();
  if (device.has_value() && !to_cpu) {
    TORCH_CHECK(device->type() == c10::DeviceType::PrivateUse1, "trn can copy to and from cpu only, got ",
                *device);
    d = resolve(device->index());
  }
  auto alias = cpu_alias(self);
  at::Tensor out;
  if (sub_byte_bits(self.scalar_type()) != 0 && (!dtype.has_value() || *dtype == self.scalar_type()) &&
      self.is_contiguous()) {
    out = at::empty_quantized(self.sizes(), alias);  // same quantizer, on cpu
    TORCH_INTERNAL_ASSERT(packed_copy(alias, out));
  } else {
    out = at::_ops::_to_copy::redispatch(c10::DispatchKeySet(c10::DispatchKey::QuantizedCPU),
                                         alias, dtype, layout, c10::Device(c10::DeviceType::CPU),
                                         pin, non_blocking, mf);
  }
  return to_cpu ? out : adopt_as_device(out, d);
}

// Quantized tensors cross between cpu and trn through the same copy (the CPU copy kernel keeps the
// quantizer). CUDA-style dispatch ranks the cpu side first for a cpu<->trn copy, so both
// Quantized keys get it; QuantizedCPU has no _copy_from of its own (it never crosses devices).
TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  m.impl("set_.source_Storage_storage_offset", set_storage_offset_quantized);
  m.impl("_to_copy", quantized_to_copy);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}
TORCH_LIBRARY_IMPL(aten, QuantizedCPU, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
}

} // namespace trn

namespace trn {
// _copy_from reads conj/neg bits itself (the CPU copy kernel resolves them); without these
// fallthroughs the Conjugate/Negative fallbacks would materialise the source with a copy,
// which calls _copy_from again — forever.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
} // namespace trn
