// Extension point: c10::impl::DeviceGuardImplInterface — devices, streams, events.
// Work runs synchronously on the host, so a stream is an ordering id and an event is a timestamp
// taken when it is recorded: query/synchronize are immediately complete, elapsed_time is real.
#include "trn.h"

#include <Python.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace torch::autograd {
TORCH_API int get_current_graph_task_id();  // graph_task.h: -1 outside a backward pass
} // namespace torch::autograd

namespace trn {

namespace {
std::atomic<int> g_device_count{8};
thread_local c10::DeviceIndex tl_device = 0;
// Current stream id per device for this thread; 0 is the default stream.
thread_local std::array<c10::StreamId, kMaxDevices> tl_stream{};
std::array<std::atomic<c10::StreamId>, kMaxDevices> g_next_stream{};
constexpr c10::StreamId kPoolSize = 32;
std::array<std::atomic<c10::StreamId>, kMaxDevices> g_next_pooled{};

struct Event {
  c10::DeviceIndex device = -1;
  c10::StreamId stream = 0;
  bool timing = false;
  bool recorded = false;
  double time_ms = 0;
};

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Autograd's device threads. The first backward starts one per device ("pt_autograd_<i>"), and
// each names itself only after it has taken the GIL once (the Python engine counts a thread as
// started before that). trn runs backward passes on the calling thread (register.py), so no
// device thread has to be running for the backward to finish, and a caller that looks right
// after it (OpenReg's test_autograd_init reads /proc) could find some still unnamed, depending on
// scheduling. The first backward therefore waits, without the GIL, until every device thread has
// named itself (each then sets its device through this guard), at most kSettleMs once.
constexpr double kSettleMs = 500;
std::atomic<uint64_t> g_named_threads{0};  // bit i: pt_autograd_<i> has named itself
std::atomic<bool> g_settled{false};
std::atomic<double> g_settle_deadline{0};
thread_local bool tl_thread_seen = false;

void note_autograd_thread(c10::DeviceIndex index) {
  if (tl_thread_seen) return;
  tl_thread_seen = true;
  char name[16] = {0};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return;
  if (std::strncmp(name, "pt_autograd_", 12) == 0 && index >= 0 && index < 64)
    g_named_threads.fetch_or(uint64_t{1} << index);
}

void settle_autograd_threads() {
  if (g_settled.load(std::memory_order_relaxed)) return;
  // Only inside a backward pass (the engine has started its threads by then), and never while
  // holding the GIL, which the threads need.
  if (torch::autograd::get_current_graph_task_id() == -1 || PyGILState_Check()) return;
  const int n = device_count();
  const uint64_t all = n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  double unset = 0;
  g_settle_deadline.compare_exchange_strong(unset, now_ms() + kSettleMs);
  const double deadline = g_settle_deadline.load();
  while ((g_named_threads.load() & all) != all && now_ms() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  g_settled = true;
}
} // namespace

c10::DeviceIndex device_count() {
  return static_cast<c10::DeviceIndex>(g_device_count.load());
}

void set_device_count(int n) {
  TORCH_CHECK(n >= 1 && n <= kMaxDevices, "trn: device count must be in [1, ", kMaxDevices,
              "], got ", n);
  g_device_count = n;
}

void check_device_index(c10::DeviceIndex index) {
  // As CUDA: torch.AcceleratorError (a RuntimeError) with the runtime's "invalid device ordinal"
  // and cudaErrorInvalidDevice's code.
  if (index < 0 || index >= device_count())
    throw c10::AcceleratorError(
        {__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, 101,
        c10::str("trn error: invalid device ordinal: device index ", static_cast<int>(index),
                 " is out of range (device_count() is ", static_cast<int>(device_count()), ")"));
}

c10::DeviceIndex resolve(c10::DeviceIndex index) {
  if (index < 0) return tl_device;
  check_device_index(index);
  return index;
}

c10::DeviceIndex current_device() { return tl_device; }

void set_current_device(c10::DeviceIndex index) {
  check_device_index(index);
  tl_device = index;
}

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return kType; }

  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = getDevice();
    if (d.index() != old.index()) setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kType, tl_device); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kType, "trn guard got a ", d.type(), " device");
    set_current_device(resolve(d.index()));
    note_autograd_thread(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count()) tl_device = d.index();
  }
  c10::DeviceIndex deviceCount() const noexcept override { return device_count(); }
  // torch.accelerator.get_device_capability: every dtype the dtype policy accepts, quantized
  // ones included (quantized trn tensors run QuantizedCPU's kernels, ops.cpp/fallback.cpp).
  c10::DeviceCapability getDeviceCapability(c10::Device) const override {
    c10::DeviceCapability cap;
#define TRN_DROP_UNSUPPORTED(_, n)                \
  if (!dtype_supported(c10::ScalarType::n)) \
    cap.capability_data.supported_scalar_types.has_##n = false;
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(TRN_DROP_UNSUPPORTED)
#undef TRN_DROP_UNSUPPORTED
    return cap;
  }

  c10::Stream getStream(c10::Device d) const override {
    auto i = resolve(d.index());
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, i), tl_stream[i]);
  }
  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kType, resolve(d.index())));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*high_priority*/) const override {
    auto i = resolve(d.index());
    auto id = 1 + (g_next_pooled[i]++ % kPoolSize);
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, i), id);
  }
  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override {
    auto i = resolve(d.index());
    // Ids above the pool so a new stream never equals a pooled or default one.
    auto id = kPoolSize + 1 + g_next_stream[i]++;
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, i), id);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    settle_autograd_threads();  // the engine sets each node's stream through here
    auto i = resolve(s.device_index());
    auto old = c10::Stream(c10::Stream::UNSAFE, c10::Device(kType, i), tl_stream[i]);
    tl_stream[i] = s.id();
    return old;
  }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream& s) const override {
    notify_stream("stream_sync", s.device_index(), s.id(), nullptr);
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    notify_stream("device_sync", resolve(index), 0, nullptr);
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "Event device index ", static_cast<int>(device_index),
                " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    auto* e = static_cast<Event*>(*event);
    if (e == nullptr) {
      e = new Event();
      e->timing = flag == c10::EventFlag::BACKEND_DEFAULT;
      *event = e;
    }
    e->device = stream.device_index();
    e->stream = stream.id();
    e->recorded = true;
    e->time_ms = now_ms();
    notify_stream("record", stream.device_index(), stream.id(), e);
  }
  void block(void* event, const c10::Stream& stream) const override {
    // Everything recorded so far has already run: waiting is complete by construction.
    notify_stream("block", stream.device_index(), stream.id(), event);
  }
  bool queryEvent(void* /*event*/) const override { return true; }
  void synchronizeEvent(void* event) const override { notify_stream("event_sync", -1, 0, event); }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<Event*>(event);
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    auto* a = static_cast<Event*>(start);
    auto* b = static_cast<Event*>(end);
    TORCH_CHECK(a->timing && b->timing,
                "Both events must be created with argument 'enable_timing=True'.");
    TORCH_CHECK(a->recorded && b->recorded,
                "Both events must be recorded before calculating elapsed time.");
    return b->time_ms - a->time_ms;
  }
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {
    // No deferred frees: memory is released when its last reference goes.
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

} // namespace trn
