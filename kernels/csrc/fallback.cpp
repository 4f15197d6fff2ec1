// Extension point: the boxed fallback. Every aten op without a trn kernel runs the CPU kernel on
// zero-copy CPU aliases of its trn arguments:
//   in-place / out=   the kernel writes device memory directly; resizes and set_ made by the
//                     kernel are carried back to the caller's tensor;
//   views             outputs sharing a device storage come back as device views of it;
//   fresh outputs     the CPU kernel's memory is adopted as device memory (no copy);
//   generators        trn generators (or the device default) are swapped for their CPU engine;
//   devices           mixed trn:i / trn:j or non-scalar cpu arguments raise like CUDA does; 0-dim
//                     cpu tensors are scalar operands where CUDA takes them (ops without
//                     torchgen's device check, kernels/trn/device_check.py) and refused elsewhere;
//   sparse COO        a SparsePrivateUse1 tensor is its indices and values (dense trn tensors):
//                     the SparseCPU kernel runs on a SparseCPU tensor over their aliases, and
//                     what it returns or leaves in place comes back as a SparsePrivateUse1 tensor.
// fast.cpp has unboxed versions of this path for the hottest elementwise ops.
#include "tensors.h"

#include <ATen/SparseTensorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>
#include <torch/library.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace trn {

namespace {
using c10::IValue;

struct StorageAlias {
  c10::Storage device;
  c10::Storage cpu;
  const void* data;  // what the CPU storage pointed at before the kernel ran
  size_t nbytes;
};

struct Aliased {
  at::Tensor device;
  at::Tensor cpu;
  size_t storage;  // index into Call::storages
};

// A sparse trn tensor and the SparseCPU tensor over the aliases of its indices and values.
struct SparseAliased {
  at::Tensor device;
  at::Tensor cpu;
};

at::SparseTensorImpl* sparse_impl(const at::Tensor& t) {
  return static_cast<at::SparseTensorImpl*>(t.unsafeGetTensorImpl());
}

// A sparse COO tensor with `key` (SparseCPU or SparsePrivateUse1) over `indices` and `values`
// as they are (no copy), with the shape and coalesced flag of `like`. The impl allocates its
// placeholder indices on the current device, hence the guard.
at::Tensor make_sparse(c10::DispatchKey key, const at::Tensor& like, const at::Tensor& indices,
                       const at::Tensor& values) {
  c10::DeviceGuard guard(values.device());
  auto r = at::detail::make_tensor<at::SparseTensorImpl>(c10::DispatchKeySet(key), values.dtype());
  auto* from = sparse_impl(like);
  auto* impl = sparse_impl(r);
  impl->raw_resize_(from->sparse_dim(), from->dense_dim(), like.sizes());
  impl->set_indices_and_values_unsafe(indices, values);
  impl->set_coalesced(from->coalesced());
  return r;
}

// A `dtype` argument naming a quantized type (factories such as _empty_affine_quantized, which
// torch.load and deepcopy use to rebuild a quantized tensor): the QuantizedCPU kernel must run,
// since the CPU one refuses ("Creation of quantized tensor requires quantized dtype").
bool is_quantized_dtype(const c10::Argument& a, const IValue& v) {
  if (a.name() != "dtype" || !v.isInt()) return false;
  return c10::isQIntType(static_cast<c10::ScalarType>(v.toInt()));
}

bool is_optional_generator(const c10::Argument& a) {
  const auto& t = a.real_type();
  if (auto o = t->castRaw<c10::OptionalType>())
    return o->getElementType()->kind() == c10::TypeKind::GeneratorType;
  return false;
}

// Index tensors on cpu are accepted next to device tensors, as CUDA moves them to the indexed
// tensor's device. `index` accepts any cpu argument (a cpu tensor indexed by device indices works
// on CUDA too); the index_put family only its `indices`: CUDA's TensorIterator refuses a
// non-scalar cpu `values` or a cpu `self` next to device tensors.
bool accepts_cpu_tensors(const c10::FunctionSchema& s) { return s.name() == "aten::index"; }

bool cpu_indices_ok(const c10::FunctionSchema& s, const c10::Argument& a) {
  const auto& n = s.name();
  return a.name() == "indices" &&
         (n == "aten::index_put_" || n == "aten::index_put" || n == "aten::_index_put_impl_");
}

// `index`'s indices: CUDA's meta function accepts them on cpu or on the indexed tensor's device
// and raises an IndexError for any other device (`check_indices_on_cpu_or_selfdevice`), while the
// index_put family moves them to the indexed tensor's device (`make_info`), so a trn index on
// another trn device is read in place there (trn memory is host memory).
bool index_indices(const c10::FunctionSchema& s, const c10::Argument& a) {
  return a.name() == "indices" && s.name() == "aten::index";
}

// Ops whose CUDA kernel checks every positional and out tensor for one device, by
// `name.overload` (set from Python), and the answer per schema once asked.
std::mutex g_checked_mu;
std::unordered_set<std::string> g_checked_names;
std::unordered_map<const c10::FunctionSchema*, bool> g_checked_cache;

bool device_checked(const c10::FunctionSchema& s) {
  std::lock_guard<std::mutex> lock(g_checked_mu);
  auto it = g_checked_cache.find(&s);
  if (it != g_checked_cache.end()) return it->second;
  auto name = s.name().substr(6) + (s.overload_name().empty() ? "" : "." + s.overload_name());
  bool checked = s.name().rfind("aten::", 0) == 0 && g_checked_names.count(name) > 0;
  g_checked_cache.emplace(&s, checked);
  return checked;
}

[[noreturn]] void mixed(const c10::FunctionSchema& s, const std::string& a, const std::string& b) {
  TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two "
                     "devices, ", a, " and ", b, "! (when running ", s.operator_name(), " on trn)");
}

struct Call {
  const c10::FunctionSchema& schema;
  c10::DeviceIndex device = -1;
  bool saw_cpu = false;
  size_t trn_operands = 0;  // trn arguments other than index_put's indices
  c10::SmallVector<Aliased, 4> aliased;
  c10::SmallVector<SparseAliased, 1> sparse;
  c10::SmallVector<std::pair<c10::StorageImpl*, c10::Storage>, 2> adopted;
  // Storages of 0-dim cpu arguments: an output viewing one stays a cpu tensor (as on CUDA)
  // instead of having the caller's host memory adopted as device memory.
  c10::SmallVector<c10::StorageImpl*, 2> cpu_scalars;

  explicit Call(const c10::FunctionSchema& s) : schema(s) {}

  c10::SmallVector<StorageAlias, 4> storages;

  // One CPU storage per device storage, so aliasing between arguments stays visible to the
  // CPU kernel's overlap checks.
  size_t storage_index(const c10::Storage& device) {
    auto* impl = device.unsafeGetStorageImpl();
    for (size_t i = 0; i < storages.size(); ++i)
      if (storages[i].device.unsafeGetStorageImpl() == impl) return i;
    auto cpu = cpu_storage_alias(device);
    storages.push_back({device, cpu, cpu.data(), cpu.nbytes()});
    return storages.size() - 1;
  }

  // `checked`: the argument is one CUDA's device check looks at (positional or out=), so a
  // 0-dim cpu tensor there is a scalar operand only if the op has no device check.
  // `index`: an index tensor of the index_put ops, which CUDA moves to the indexed tensor's
  // device, so its device never makes a mismatch with cpu arguments.
  at::Tensor to_cpu(const at::Tensor& t, bool checked, bool index = false) {
    if (!t.defined()) return t;
    if (!is_trn(t)) {
      if (t.is_cpu() && index) return t;
      if (t.is_cpu()) {
        if (t.dim() != 0 || (checked && device_checked(schema))) saw_cpu = true;
        else cpu_scalars.push_back(t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl());
      }
      return t;
    }
    auto d = t.device().index();
    if (device < 0) device = d;
    else if (d != device && !index)
      mixed(schema, "trn:" + std::to_string(device), "trn:" + std::to_string(d));
    if (!index) ++trn_operands;
    if (t.layout() == c10::kSparse) {
      auto* s = sparse_impl(t);
      auto cpu = make_sparse(c10::DispatchKey::SparseCPU, t, alias(s->indices()), alias(s->values()));
      sparse.push_back({t, cpu});
      return cpu;
    }
    return alias(t);
  }

  // A CPU alias of a dense trn tensor, remembered so outputs and in-place results map back.
  at::Tensor alias(const at::Tensor& t) {
    auto si = storage_index(t.storage());
    auto a = cpu_alias(t, storages[si].cpu);
    aliased.push_back({t, a, si});
    return a;
  }

  // The device storage for a CPU storage seen after the kernel: an alias maps back to its
  // device storage; anything else is fresh CPU memory and is adopted.
  c10::Storage device_storage(const c10::Storage& cpu) {
    auto* key = cpu.unsafeGetStorageImpl();
    for (const auto& s : storages)
      if (s.cpu.unsafeGetStorageImpl() == key) return s.device;
    for (const auto& [k, s] : adopted)
      if (k == key) return s;
    c10::Storage s(c10::Storage::use_byte_size_t(), cpu.nbytes(), adopt(cpu, device),
                   device_allocator(device), /*resizable=*/true);
    adopted.emplace_back(key, s);
    return s;
  }

  at::Tensor to_device(const at::Tensor& out) {
    if (out.defined() && out.is_cpu() && out.layout() == c10::kSparse) return sparse_to_device(out);
    if (!out.defined() || !out.is_cpu() || out.layout() != c10::kStrided) return out;
    auto* impl = out.unsafeGetTensorImpl();
    for (const auto& a : aliased)
      if (a.cpu.unsafeGetTensorImpl() == impl) return a.device;  // in-place / out= / identity
    // A QuantizedCPU result becomes a QuantizedPrivateUse1 tensor over the adopted bytes, with
    // its quantizer (device_view); int8/uint8/int32 storage needs no dtype policy decision.
    if (out.is_quantized()) return device_view(out, device_storage(out.storage()));
    for (auto* s : cpu_scalars)
      if (out.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl() == s) return out;
    // A per-channel quantizer keeps its scales in double on every backend, and
    // q_per_channel_scales hands them out as a float64 tensor (CUDA: on the device). trn has no
    // float64, so it hands them out in float32: quantizer metadata, not a float64 computation the
    // user asked for (scales made from float32 tensors round-trip exactly).
    if (out.scalar_type() == at::kDouble && schema.name() == "aten::q_per_channel_scales") {
      auto cast = out.to(at::kFloat);
      return device_view(cast, device_storage(cast.storage()));
    }
    // Trainium dtype policy (policy.cpp): raise for e.g. sum(dtype=float64), or downcast a fresh
    // output in permissive mode (views of device storages keep their bytes).
    auto dtype = check_dtype(out.scalar_type(), schema.name().c_str());
    if (dtype != out.scalar_type()) {
      bool fresh = true;
      for (const auto& s : storages)
        if (s.cpu.unsafeGetStorageImpl() == out.storage().unsafeGetStorageImpl()) fresh = false;
      if (fresh) {
        auto cast = out.to(dtype);
        return device_view(cast, device_storage(cast.storage()));
      }
    }
    // A fresh output nothing else holds becomes a device tensor in place (fast.cpp).
    if (adopt_in_place(out, device)) return out;
    return device_view(out, device_storage(out.storage()));
  }

  // A SparseCPU result: the sparse trn argument it is (in-place, identity), else a new
  // SparsePrivateUse1 tensor over its indices and values brought to the device like any output.
  at::Tensor sparse_to_device(const at::Tensor& out) {
    for (const auto& s : sparse)
      if (s.cpu.unsafeGetTensorImpl() == out.unsafeGetTensorImpl()) return s.device;
    auto* s = sparse_impl(out);
    return make_sparse(c10::DispatchKey::SparsePrivateUse1, out, to_device(s->indices()),
                       to_device(s->values()));
  }

  // A kernel that changed a sparse argument in place (zero_, resize_, copy_, add_ of sparse
  // tensors) gave its SparseCPU alias new indices/values or a new shape: the trn tensor takes them.
  void sparse_sync_back() {
    for (auto& s : sparse) {
      auto* c = sparse_impl(s.cpu);
      auto* d = sparse_impl(s.device);
      auto indices = to_device(c->indices());
      auto values = to_device(c->values());
      if (indices.unsafeGetTensorImpl() == d->indices().unsafeGetTensorImpl() &&
          values.unsafeGetTensorImpl() == d->values().unsafeGetTensorImpl() &&
          s.cpu.sizes() == s.device.sizes() && c->sparse_dim() == d->sparse_dim() &&
          c->coalesced() == d->coalesced())
        continue;
      d->raw_resize_(c->sparse_dim(), c->dense_dim(), s.cpu.sizes());
      d->set_indices_and_values_unsafe(indices, values);
      d->set_coalesced(c->coalesced());
    }
  }

  // Carries what the CPU kernel did to the aliases back to the device tensors: storages it grew
  // (resize of an out= argument), storages it swapped (set_), and new sizes/strides/offsets.
  void sync_back() {
    for (auto& s : storages) {
      auto* cpu = s.cpu.unsafeGetStorageImpl();
      if (cpu->data() == s.data && cpu->nbytes() == s.nbytes) continue;
      auto* dev = s.device.unsafeGetStorageImpl();
      if (cpu->data() != s.data) {
        // The CPU storage now owns fresh CPU memory: hand it to the device storage. The alias
        // keeps that memory alive; the old device memory is released here.
        dev->set_data_ptr_noswap(adopt(s.cpu, device));
      }
      dev->set_nbytes(cpu->nbytes());
    }
    for (auto& a : aliased) {
      auto* d = a.device.unsafeGetTensorImpl();
      auto* c = a.cpu.unsafeGetTensorImpl();
      if (c->unsafe_storage().unsafeGetStorageImpl() !=
          storages[a.storage].cpu.unsafeGetStorageImpl())
        d->set_storage_keep_dtype(device_storage(c->unsafe_storage()));
      if (c->sizes() != d->sizes() || c->strides() != d->strides() ||
          c->storage_offset() != d->storage_offset())
        d->set_sizes_and_strides(c->sizes(), c->strides(), c->storage_offset());
    }
  }

  IValue list_to_device(const IValue& v) {
    if (v.isTensorList()) {
      auto in = v.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(in.size());
      for (const at::Tensor& t : in) out.push_back(to_device(t));
      return out;
    }
    auto in = v.toList();
    c10::impl::GenericList out(in.elementType());
    for (const IValue& e : in) out.push_back(e.isTensor() ? IValue(to_device(e.toTensor())) : e);
    return out;
  }
};
} // namespace

namespace {
// `cpu_key`: the CPU backend whose kernel runs, CPU for trn's dense (and quantized) keys,
// SparseCPU for SparsePrivateUse1.
void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::DispatchKey cpu_key) {
  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t base = stack->size() - args.size();
  Call call(schema);
  c10::SmallVector<size_t, 2> default_gen;
  bool quantized_dtype = false;

  for (size_t i = 0; i < args.size(); ++i) {
    IValue& v = (*stack)[base + i];
    const bool checked = !args[i].kwarg_only() || (args[i].alias_info() != nullptr &&
                                                   args[i].alias_info()->isWrite());
    if (v.isTensor()) {
      // A cpu tensor the op writes (out=, in-place self) is never a scalar operand: CUDA refuses
      // a cpu 0-dim output next to device inputs ("Expected all tensors to be on the same
      // device"), so the mixed-device check below sees it as a full cpu tensor.
      const auto* alias = args[i].alias_info();
      if (alias != nullptr && alias->isWrite() && v.toTensor().defined() && v.toTensor().is_cpu())
        call.saw_cpu = true;
      v = call.to_cpu(v.toTensor(), checked);
    } else if (v.isTensorList()) {
      auto in = v.toTensorList();
      c10::List<at::Tensor> out;
      out.reserve(in.size());
      for (const at::Tensor& t : in) out.push_back(call.to_cpu(t, checked));
      v = out;
    } else if (v.isList()) {  // Tensor?[] (indices) and other generic lists
      const bool cpu_indices = cpu_indices_ok(schema, args[i]);
      const bool get_indices = index_indices(schema, args[i]);
      auto in = v.toList();
      c10::impl::GenericList out(in.elementType());
      out.reserve(in.size());
      for (const IValue& e : in) {
        if (get_indices && e.isTensor() && is_trn(e.toTensor()) && call.device >= 0)
          TORCH_CHECK_INDEX(e.toTensor().device().index() == call.device,
                            "indices should be either on cpu or on the same device as the "
                            "indexed tensor (", c10::Device(c10::DeviceType::PrivateUse1, call.device),
                            ")");
        out.push_back(e.isTensor() ? IValue(call.to_cpu(e.toTensor(), checked, cpu_indices)) : e);
      }
      v = out;
    } else if (v.isDevice()) {
      auto d = v.toDevice();
      if (d.type() == c10::DeviceType::PrivateUse1) {
        call.device = resolve(d.index());
        v = c10::Device(c10::DeviceType::CPU);
      }
    } else if (v.isGenerator()) {
      const auto& g = v.toGenerator();
      if (g.device().type() == c10::DeviceType::PrivateUse1) v = cpu_engine(g);
    } else if (v.isNone() && is_optional_generator(args[i])) {
      default_gen.push_back(i);
    } else if (is_quantized_dtype(args[i], v)) {
      quantized_dtype = true;
    }
  }
  if (call.device < 0) call.device = current_device();
  if (call.saw_cpu && call.trn_operands > 0 && !accepts_cpu_tensors(schema))
    mixed(schema, "trn:" + std::to_string(call.device), "cpu");
  for (auto i : default_gen) (*stack)[base + i] = cpu_engine(default_generator(call.device));

  // Quantized aliases go to the QuantizedCPU kernels, as the dispatcher ranks Quantized above Dense.
  // So do quantized factories (a quantized dtype, no tensor argument).
  bool quantized = quantized_dtype && call.aliased.empty() &&
                   op.hasKernelForDispatchKey(c10::DispatchKey::QuantizedCPU);
  for (const auto& a : call.aliased) quantized = quantized || a.cpu.is_quantized();
  if (!call.sparse.empty()) cpu_key = c10::DispatchKey::SparseCPU;
  op.redispatchBoxed(c10::DispatchKeySet(quantized ? c10::DispatchKey::QuantizedCPU : cpu_key),
                     stack);

  call.sync_back();
  call.sparse_sync_back();
  const size_t nret = schema.returns().size();
  for (size_t j = stack->size() - nret; j < stack->size(); ++j) {
    IValue& r = (*stack)[j];
    if (r.isTensor()) r = call.to_device(r.toTensor());
    else if (r.isTensorList() || r.isList()) r = call.list_to_device(r);
  }
}

void sparse_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKey::SparseCPU);
}
} // namespace

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  run_on_cpu(op, stack, c10::DispatchKey::CPU);
}

namespace {
std::once_flag g_claim_once;
int64_t g_claimed = 0;
std::unique_ptr<torch::Library> g_claim_lib;
std::unique_ptr<torch::Library> g_claim_quantized_lib;
std::unique_ptr<torch::Library> g_claim_sparse_lib;

bool has_composite(const c10::OperatorHandle& op) {
  return op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional);
}

// Whether trn's PrivateUse1 slot needs the fallback registered directly for `op`.
bool claim_dense(const c10::OperatorName& name, const c10::OperatorHandle& op) {
  if (op.hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) return false;
  // convolution's composite routes every non-CPU/CUDA backend to convolution_overrideable,
  // which throws; the CPU entry of the same composite picks the CPU algorithms.
  if (name.name == "aten::convolution" || name.name == "aten::convolution_backward") return true;
  // Composites that refuse any device but CPU/CUDA/XPU (mode_out: "mode only supports CPU,
  // CUDA and XPU device type"); on CPU aliases they run the CPU kernel like everything else.
  if (name.name == "aten::mode" && name.overload_name == "values") return true;
  // ldexp's composite computes in one fused kernel only when self.is_cpu(); on any other device it
  // decomposes into pow(2, other) in self's dtype, which overflows float16 (2**20 -> inf, and
  // 2**-25 flushes to 0) where CPU and CUDA return mantissa * 2**exponent (upstream
  // test_binary_ufuncs test_ldexp). On CPU aliases the same composite takes the CPU path.
  if (name.name == "aten::ldexp" || name.name == "aten::ldexp_") return true;
  return has_composite(op) && op.hasKernelForDispatchKey(c10::DispatchKey::CPU);
}

// The same for QuantizedPrivateUse1: a composite also fills the quantized backend slots, so
// clone, mean, sort, cat... of a quantized trn tensor would decompose into ops that lose the
// quantizer ("Copying from quantized Tensor to non-quantized Tensor is not allowed") instead of
// running QuantizedCPU's kernel on the aliases as on cpu.
bool claim_quantized(const c10::OperatorHandle& op) {
  return !op.hasKernelForDispatchKey(c10::DispatchKey::QuantizedPrivateUse1) && has_composite(op) &&
         op.hasKernelForDispatchKey(c10::DispatchKey::QuantizedCPU);
}
// And for SparsePrivateUse1: a composite (clone, copy_, is_coalesced's "expected sparse
// coordinate tensor layout" default) would win over the sparse fallback where SparseCPU has a
// kernel of its own (clone_sparse, copy_sparse_wrapper_, is_coalesced_sparse).
bool claim_sparse(const c10::OperatorHandle& op) {
  return !op.hasKernelForDispatchKey(c10::DispatchKey::SparsePrivateUse1) && has_composite(op) &&
         op.hasKernelForDispatchKey(c10::DispatchKey::SparseCPU);
}
} // namespace

int64_t claim_composite_ops() {
  std::call_once(g_claim_once, [] {
    g_claim_lib = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
    g_claim_quantized_lib = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", c10::DispatchKey::QuantizedPrivateUse1, __FILE__, __LINE__);
    g_claim_sparse_lib = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", c10::DispatchKey::SparsePrivateUse1, __FILE__, __LINE__);
    auto& dispatcher = c10::Dispatcher::singleton();
    for (const auto& name : dispatcher.getAllOpNames()) {
      if (name.name.rfind("aten::", 0) != 0) continue;
      auto op = dispatcher.findOp(name);
      if (!op || !op->hasSchema()) continue;
      auto qualified = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
      if (claim_dense(name, *op)) {
        g_claim_lib->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&fallback>());
        ++g_claimed;
      }
      if (claim_quantized(*op))
        g_claim_quantized_lib->impl(qualified.c_str(),
                                    torch::CppFunction::makeFromBoxedFunction<&fallback>());
      if (claim_sparse(*op))
        g_claim_sparse_lib->impl(qualified.c_str(),
                                 torch::CppFunction::makeFromBoxedFunction<&sparse_fallback>());
    }
  });
  return g_claimed;
}

void set_device_checked_ops(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(g_checked_mu);
  g_checked_names = std::unordered_set<std::string>(names.begin(), names.end());
  g_checked_cache.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Quantized trn tensors (QuantizedPrivateUse1) run the QuantizedCPU kernels the same way.
TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

// Sparse COO trn tensors (SparsePrivateUse1) run the SparseCPU kernels on their aliases.
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_fallback>());
}

// Autocast for trn is decided in Python (kernels/trn/autocast.py); without a fallthrough here the
// AutocastPrivateUse1 key would have no kernel at all for most ops.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

} // namespace trn
