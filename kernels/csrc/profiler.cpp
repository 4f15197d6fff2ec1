// Kineto activity profiler for trn: `torch.profiler.profile(activities=[..., PrivateUse1])`
// gets one device activity per kernel that ran on a trn device.
//
// PyTorch forwards a factory registered in PrivateUse1ProfilerRegistry to Kineto, which calls it
// when a trace that asks for PrivateUse1 activities starts. trn kernels run synchronously on the
// host, so a "device kernel" is the innermost ATen operator whose inputs or outputs live on trn:
// while a session records, a RecordFunction callback times those operators and the session hands
// them to Kineto as CONCURRENT_KERNEL activities on device `trn:<index>` (they land in the Chrome
// trace and in key_averages' device columns, as CUDA kernels do).
//
// privateuse1_profiler.h includes <IActivityProfiler.h> by a path cpp_extension does not put on
// the include line, so the registry's two exported entry points are declared here instead.

// fmt is not exported by libtorch: GenericTraceActivity's inline metadataJson() needs its own copy
#define FMT_HEADER_ONLY 1
#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>
#include <c10/util/ApproximateClock.h>
#include <kineto/GenericTraceActivity.h>
#include <kineto/IActivityProfiler.h>
#include <kineto/TraceSpan.h>
#include <kineto/output_base.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "trn.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// Kineto's headers only forward-declare CpuTraceBuffer, but getTraceBuffer() must return a
// unique_ptr to one, whose destructor C++20 treats as potentially invoked on return. trn never
// hands Kineto a buffer (always null), so this TU's deleter is never called; hidden, it cannot
// stand in for Kineto's own.
template <>
struct std::default_delete<libkineto::CpuTraceBuffer> {
  __attribute__((visibility("hidden"))) void operator()(libkineto::CpuTraceBuffer*) const noexcept {}
};

namespace torch::profiler::impl {
using PrivateUse1ProfilerFactory = std::function<std::unique_ptr<libkineto::IActivityProfiler>()>;
class PrivateUse1ProfilerRegistry {
 public:
  static PrivateUse1ProfilerRegistry& instance();
  void registerFactory(PrivateUse1ProfilerFactory factory);
};
}  // namespace torch::profiler::impl

namespace trn::profiler {
namespace {

struct Kernel {
  std::string name;
  int64_t start_ns;
  int64_t end_ns;
  int device;
  int64_t thread;
  uint64_t seq;
};

std::mutex g_mutex;
std::vector<Kernel> g_kernels;  // guarded by g_mutex
std::atomic<bool> g_recording{false};

struct Frame {
  bool trn_child = false;
};
thread_local std::vector<Frame> t_stack;

struct OpContext : at::ObserverContext {
  int64_t start_ns = 0;
  int device = -1;
};

int trn_device_of(c10::ArrayRef<c10::IValue> values) {
  for (const auto& v : values) {
    if (v.isTensor()) {
      const auto& t = v.toTensor();
      if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) {
        return t.device().index();
      }
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) {
        if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) {
          return t.device().index();
        }
      }
    }
  }
  return -1;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  t_stack.emplace_back();
  auto ctx = std::make_unique<OpContext>();
  try {
    ctx->device = trn_device_of(fn.inputs());
  } catch (const c10::Error&) {
    // a range opened without its inputs (RECORD_FUNCTION with a name only): judge by outputs
  }
  ctx->start_ns = c10::getTime();
  return ctx;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext* raw) {
  const int64_t end_ns = c10::getTime();
  if (t_stack.empty()) {
    return;  // callback added while this operator was already running
  }
  const bool trn_child = t_stack.back().trn_child;
  t_stack.pop_back();
  auto* ctx = static_cast<OpContext*>(raw);
  if (ctx == nullptr) {
    return;
  }
  int device = ctx->device;
  if (device < 0) {
    device = trn_device_of(fn.outputs());
  }
  if (device < 0) {
    return;
  }
  if (!t_stack.empty()) {
    t_stack.back().trn_child = true;
  }
  if (trn_child || !g_recording.load(std::memory_order_relaxed)) {
    return;  // not innermost: its trn children are the kernels
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_kernels.push_back(Kernel{fn.name(), ctx->start_ns, end_ns, device,
                             static_cast<int64_t>(fn.threadId()), fn.seqNr() < 0 ? 0 : static_cast<uint64_t>(fn.seqNr())});
}

class Session final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      g_kernels.clear();
    }
    start_ns_ = c10::getTime();
    handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit)
                                        .needsInputs(true)
                                        .needsOutputs(true)
                                        .scopes({at::RecordScope::FUNCTION}));
    g_recording = true;
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    g_recording = false;
    if (handle_ != 0) {
      at::removeCallback(handle_);
      handle_ = 0;
    }
    end_ns_ = c10::getTime();
    std::lock_guard<std::mutex> lock(g_mutex);
    kernels_.swap(g_kernels);
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  void processTrace(libkineto::ActivityLogger& logger) override {
    libkineto::TraceSpan span(start_ns_, end_ns_, "trn");
    int32_t id = 0;
    for (const auto& k : kernels_) {
      libkineto::GenericTraceActivity act(span, libkineto::ActivityType::CONCURRENT_KERNEL, k.name);
      act.startTime = k.start_ns;
      act.endTime = k.end_ns;
      act.device = k.device;
      act.resource = 0;  // trn runs one queue per device
      act.threadId = static_cast<int32_t>(k.thread);
      act.id = ++id;
      act.addMetadataQuoted("device", "trn:" + std::to_string(k.device));
      act.addMetadata("device_index", k.device);
      act.addMetadata("sequence number", k.seq);
      act.log(logger);
    }
    status_ = libkineto::TraceStatus::READY;
  }

  std::vector<std::string> errors() override {
    return {};
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{0, 0, "trn", "trn:0"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::set<int> devices;
    for (const auto& k : kernels_) {
      devices.insert(k.device);
    }
    std::vector<libkineto::ResourceInfo> out;
    for (int d : devices) {
      out.push_back(libkineto::ResourceInfo{0, d, d, "trn:" + std::to_string(d) + " queue"});
    }
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return nullptr;
  }

 private:
  at::CallbackHandle handle_ = 0;
  int64_t start_ns_ = 0;
  int64_t end_ns_ = 0;
  std::vector<Kernel> kernels_;
};

class ActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override {
    return name_;
  }
  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return activities_;
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& types, const libkineto::Config&) override {
    if (types.count(libkineto::ActivityType::CONCURRENT_KERNEL) == 0) {
      return nullptr;
    }
    return std::make_unique<Session>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t, int64_t, const std::set<libkineto::ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"trn"};
  std::set<libkineto::ActivityType> activities_{libkineto::ActivityType::CONCURRENT_KERNEL};
};

// The autograd profiler's per-device hooks (`torch.autograd.profiler.profile(use_device="trn")`,
// KINETO_PRIVATEUSE1(_FALLBACK)): without them every op warns "PrivateUse1 used in profiler but
// not enabled" and device times come out as garbage. trn kernels run synchronously on the host,
// so an event is a host timestamp and elapsed() is the host time between two (in us, as CUDA's).
struct Stubs final : torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    if (device) *device = trn::current_device();
    auto ns = std::make_shared<int64_t>(c10::getTime());
    if (cpu_ns) *cpu_ns = *ns;
    *event = ns;
  }
  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* a,
                const torch::profiler::impl::ProfilerVoidEventStub* b) const override {
    auto start = *static_cast<const int64_t*>(a->get());
    auto end = *static_cast<const int64_t*>(b->get());
    return static_cast<float>(end - start) / 1000.0f;
  }
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override {
    auto previous = trn::current_device();
    for (int i = 0; i < trn::device_count(); ++i) {
      trn::set_current_device(static_cast<c10::DeviceIndex>(i));
      op(i);
    }
    trn::set_current_device(previous);
  }
  void synchronize() const override {}  // nothing is ever in flight
};
const Stubs kStubs;

struct Register {
  Register() {
    torch::profiler::impl::registerPrivateUse1Methods(const_cast<Stubs*>(&kStubs));
    torch::profiler::impl::PrivateUse1ProfilerRegistry::instance().registerFactory(
        [] { return std::unique_ptr<libkineto::IActivityProfiler>(new ActivityProfiler()); });
  }
};
const Register kRegister;

}  // namespace
}  // namespace trn::profiler
