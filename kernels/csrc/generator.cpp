// Extension point: the device generator (c10::GeneratorImpl) and per-device default generators.
// A trn generator owns a CPU engine; the fallback hands that engine to CPU kernels, so random ops
// on trn draw from the trn generator (seeded by torch.manual_seed / torch.trn.manual_seed).
#include "trn.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <deque>
#include <mutex>

namespace trn {

namespace {
struct TrnGeneratorImpl final : public c10::GeneratorImpl {
  TrnGeneratorImpl(c10::DeviceIndex index, at::Generator engine)
      : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, index),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
        engine_(std::move(engine)) {}

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  void set_current_seed(uint64_t seed) override { engine_.set_current_seed(seed); }
  // Offsets belong to counter-based (Philox) engines; this one is a Mersenne Twister, like CPU's.
  void set_offset(uint64_t) override {
    TORCH_CHECK(false, "trn generator does not support set_offset (a Mersenne Twister engine, not a "
                "counter-based one; save and restore get_state()/set_state() instead)");
  }
  uint64_t get_offset() const override {
    TORCH_CHECK(false, "trn generator does not support get_offset (a Mersenne Twister engine, not a "
                "counter-based one; save and restore get_state()/set_state() instead)");
  }
  uint64_t current_seed() const override { return engine_.current_seed(); }
  uint64_t seed() override { return engine_.seed(); }
  void set_state(const c10::TensorImpl& state) override {
    std::lock_guard<std::mutex> lock(engine_.mutex());
    engine_.unsafeGetGeneratorImpl()->set_state(state);
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    std::lock_guard<std::mutex> lock(engine_.mutex());
    return engine_.unsafeGetGeneratorImpl()->get_state();
  }
  TrnGeneratorImpl* clone_impl() const override {
    return new TrnGeneratorImpl(device().index(), engine_.clone());
  }
  mutable at::Generator engine_;
};

std::once_flag g_defaults_once;
std::deque<at::Generator> g_defaults;  // deque: stable references

void init_defaults() {
  for (int i = 0; i < kMaxDevices; ++i)
    g_defaults.emplace_back(at::make_generator<TrnGeneratorImpl>(
        static_cast<c10::DeviceIndex>(i),
        at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val)));
}
} // namespace

const at::Generator& default_generator(c10::DeviceIndex index) {
  std::call_once(g_defaults_once, init_defaults);
  return g_defaults[resolve(index)];
}

at::Generator new_generator(c10::DeviceIndex index) {
  return at::make_generator<TrnGeneratorImpl>(
      resolve(index), at::make_generator<at::CPUGeneratorImpl>(c10::default_rng_seed_val));
}

at::Generator cpu_engine(const at::Generator& gen) {
  TORCH_CHECK(gen.device().type() == c10::DeviceType::PrivateUse1,
              "Expected a trn generator, got one for ", gen.device());
  return static_cast<TrnGeneratorImpl*>(gen.unsafeGetGeneratorImpl())->engine_;
}

} // namespace trn
