// Extension point: c10::DeviceAllocator (device memory with per-device statistics, capacity and
// getMemoryInfo) and the pinned host allocator handed out by the hooks.
// Device memory is host RAM; every byte handed to a trn storage is counted on its device.
#include "trn.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <memory>
#include <map>
#include <vector>

#include <unistd.h>

namespace trn {

// allocation history for torch.trn.memory._record_memory_history (memory_trace.cpp)
bool memory_history_on();
void record_memory_event(c10::DeviceIndex d, const void* p, size_t n, bool alloc);

namespace {
using c10::CachingDeviceAllocator::DeviceStats;
constexpr auto kAgg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);

// Every piece of booked device memory: the deleter context of its DataPtr, linked into its
// device's list (device_of_ptr walks it) without an allocation of its own.
struct Booked {
  const void* ptr = nullptr;
  size_t bytes = 0;
  c10::DeviceIndex device = 0;
  Booked* prev = nullptr;
  Booked* next = nullptr;
  Booked(const void* p, size_t n, c10::DeviceIndex d) : ptr(p), bytes(n), device(d) {}
  Booked() = default;
};

struct DeviceState {
  std::mutex mu;
  DeviceStats stats;
  int64_t capacity = 0;  // bytes; 0 means "not yet set" (physical RAM)
  Booked live;           // sentinel of the circular list of live memory with a pointer
  DeviceState() { live.prev = live.next = &live; }
};
DeviceState g_state[kMaxDevices];

int64_t physical_ram_uncached() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : (int64_t{1} << 34);
}
int64_t physical_ram() {
  static const int64_t ram = physical_ram_uncached();  // sysconf on every allocation is not free
  return ram;
}

// ---- host memory: the emulated HBM may exceed the host's RAM (8 cores x 24 GiB) ----
// The kernel's OOM killer must never end the process for an allocation the device accepted.
// Host allocations are lazily backed, so a successful malloc proves nothing: before accepting,
// the allocator compares the request with the memory the host can still give (MemAvailable,
// and the cgroup v2 limit when there is one). Reading /proc costs microseconds, so small
// requests are checked in batches: every kHostCheckStep bytes booked, or any request that large.
constexpr int64_t kHostCheckStep = int64_t{64} << 20;
constexpr int64_t kHostMargin = int64_t{128} << 20;  // left for the rest of the process
std::atomic<int64_t> g_unchecked{0};

int64_t read_int(const char* path) {
  std::ifstream f(path);
  std::string v;
  if (!(f >> v) || v == "max") return -1;
  try {
    return std::stoll(v);
  } catch (...) {
    return -1;
  }
}

// Bytes the host can still hand out (-1: unknown).
int64_t host_available() {
  int64_t avail = -1;
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kb;
  std::string unit;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") {
      avail = kb * 1024;
      break;
    }
  }
  auto limit = read_int("/sys/fs/cgroup/memory.max");
  auto used = read_int("/sys/fs/cgroup/memory.current");
  if (limit > 0 && used >= 0) {
    auto room = std::max<int64_t>(limit - used, 0);
    avail = avail < 0 ? room : std::min(avail, room);
  }
  return avail;
}

[[noreturn]] void host_oom(c10::DeviceIndex d, size_t n, int64_t avail, const char* why) {
  TORCH_CHECK_WITH(OutOfMemoryError, false, "trn:", static_cast<int>(d),
                   " out of memory: tried to allocate ", n,
                   " bytes, which the device's capacity allows, but the host RAM that backs trn "
                   "memory ran out (", why, avail >= 0 ? "; " : "",
                   avail >= 0 ? std::to_string(avail) + " bytes available on the host" : "",
                   "). Nothing was allocated; the device stays usable.");
}

void check_host(c10::DeviceIndex d, size_t n) {
  auto want = static_cast<int64_t>(n);
  if (want < kHostCheckStep && g_unchecked.fetch_add(want) + want < kHostCheckStep) return;
  g_unchecked = 0;
  auto avail = host_available();
  if (avail >= 0 && want > avail - kHostMargin) host_oom(d, n, avail, "request above available");
}

// Throws OutOfMemoryError when `n` more bytes would exceed device `d`'s capacity (s.mu held).
void check_capacity_locked(DeviceState& s, c10::DeviceIndex d, size_t n) {
  auto cap = s.capacity ? s.capacity : physical_ram();
  if (s.stats.allocated_bytes[kAgg].current + static_cast<int64_t>(n) > cap) {
    s.stats.num_ooms++;
    auto used = s.stats.allocated_bytes[kAgg].current;
    TORCH_CHECK_WITH(OutOfMemoryError, false, "trn:", static_cast<int>(d),
                     " out of memory: tried to allocate ", n, " bytes; ", std::max<int64_t>(cap - used, 0),
                     " bytes free of ", cap, " total (", used,
                     " in use; capacity set by kernels.trn.memory.set_capacity)");
  }
}

void check_capacity(c10::DeviceIndex d, size_t n) {
  auto& s = g_state[d];
  std::lock_guard<std::mutex> lock(s.mu);
  check_capacity_locked(s, d, n);
}

// Books `b` (its bytes on its device) or throws OutOfMemoryError when over the capacity.
void book(Booked* b) {
  auto d = b->device;
  auto n = b->bytes;
  auto p = b->ptr;
  {
    auto& s = g_state[d];
    std::lock_guard<std::mutex> lock(s.mu);
    check_capacity_locked(s, d, n);
    s.stats.allocation[kAgg].increase(1);  // the other counts are copies (see stats_of)
    s.stats.allocated_bytes[kAgg].increase(n);
    s.stats.num_device_alloc++;
    if (p) {
      b->prev = &s.live;
      b->next = s.live.next;
      s.live.next->prev = b;
      s.live.next = b;
    }
  }
  if (p && memory_history_on()) record_memory_event(d, p, n, true);  // memory_trace.cpp
}

void unbook(Booked* b) {
  auto d = b->device;
  auto n = b->bytes;
  auto p = b->ptr;
  if (p && memory_history_on()) record_memory_event(d, p, n, false);  // memory_trace.cpp
  auto& s = g_state[d];
  std::lock_guard<std::mutex> lock(s.mu);
  s.stats.allocation[kAgg].decrease(1);
  s.stats.allocated_bytes[kAgg].decrease(n);
  s.stats.num_device_free++;
  if (b->prev) {
    b->prev->next = b->next;
    b->next->prev = b->prev;
  }
}

struct Owned : Booked {  // deleter context of memory this allocator obtained itself
  using Booked::Booked;
};
void free_owned(void* ctx) {
  auto* o = static_cast<Owned*>(ctx);
  unbook(o);
  c10::free_cpu(const_cast<void*>(o->ptr));
  delete o;
}

struct Adopted : Booked {  // deleter context of CPU-kernel output memory now owned by a device storage
  using Booked::Booked;
  c10::Storage cpu;
};
void free_adopted(void* ctx) {
  auto* a = static_cast<Adopted*>(ctx);
  unbook(a);
  delete a;
}

struct AdoptedPtr : Booked {  // the same for a CPU storage's DataPtr taken over in place (adopt_ptr)
  using Booked::Booked;
  c10::DataPtr cpu;
};
void free_adopted_ptr(void* ctx) {
  auto* a = static_cast<AdoptedPtr*>(ctx);
  unbook(a);
  delete a;  // the CPU DataPtr frees the memory with its own deleter
}

// The device's capacity is booked first, so a request above HBM fails before any host memory
// is touched; then the host is asked, and its failure is an OutOfMemoryError as well.
c10::DataPtr allocate_on(c10::DeviceIndex d, size_t n) {
  check_capacity(d, n);
  void* p = nullptr;
  if (n) {
    check_host(d, n);
    try {
      p = c10::alloc_cpu(n);
    } catch (const c10::Error&) {
      host_oom(d, n, host_available(), "the host allocator refused");
    }
  }
  auto* owned = new Owned(p, n, d);
  try {
    book(owned);  // checks again: another thread may have booked in between
  } catch (...) {
    delete owned;
    c10::free_cpu(p);
    throw;
  }
  return {p, owned, &free_owned, trn_device(d)};
}

// One instance per device so that a storage's allocator (used by resize) keeps its device.
struct PerDevice final : public c10::Allocator {
  c10::DeviceIndex index = 0;
  c10::DataPtr allocate(size_t n) override { return allocate_on(index, n); }
  void copy_data(void* dst, const void* src, size_t n) const override { default_copy_data(dst, src, n); }
};
PerDevice g_per_device[kMaxDevices];

struct DeviceAllocator final : public c10::DeviceAllocator {
  c10::DataPtr allocate(size_t n) override { return allocate_on(current_device(), n); }
  void copy_data(void* dst, const void* src, size_t n) const override { default_copy_data(dst, src, n); }
  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override {}  // nothing is cached
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  DeviceStats getDeviceStats(c10::DeviceIndex d) override {
    auto& s = g_state[resolve(d)];
    std::lock_guard<std::mutex> lock(s.mu);
    // Nothing is cached, split or rounded: every allocation is its own segment, active while
    // allocated, and reserves exactly the bytes requested. Only two counts are kept.
    auto stats = s.stats;
    stats.segment = stats.active = stats.allocation;
    stats.reserved_bytes = stats.active_bytes = stats.requested_bytes = stats.allocated_bytes;
    return stats;
  }
  void resetAccumulatedStats(c10::DeviceIndex d) override {
    auto& s = g_state[resolve(d)];
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto* st : {&s.stats.allocation, &s.stats.allocated_bytes})
      for (auto& x : *st) x.reset_accumulated();
    s.stats.num_alloc_retries = s.stats.num_ooms = 0;
    s.stats.num_device_alloc = s.stats.num_device_free = 0;
  }
  void resetPeakStats(c10::DeviceIndex d) override {
    auto& s = g_state[resolve(d)];
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto* st : {&s.stats.allocation, &s.stats.allocated_bytes})
      for (auto& x : *st) x.reset_peak();
  }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex d) override {
    auto i = resolve(d);
    auto cap = capacity(i);
    auto& s = g_state[i];
    std::lock_guard<std::mutex> lock(s.mu);
    auto used = s.stats.allocated_bytes[kAgg].current;
    return {static_cast<size_t>(std::max<int64_t>(cap - used, 0)), static_cast<size_t>(cap)};
  }
};
DeviceAllocator g_allocator;

struct Registrar {
  Registrar() {
    for (int i = 0; i < kMaxDevices; ++i) g_per_device[i].index = static_cast<c10::DeviceIndex>(i);
    c10::SetAllocator(c10::DeviceType::PrivateUse1, &g_allocator);
  }
} g_registrar;

// ---- pinned host memory: ordinary host memory, remembered (base -> bytes) so is_pinned() can
// answer for any pointer into it (a slice of a pinned storage is pinned, as on CUDA) ----
std::mutex g_pinned_mu;
std::map<const char*, size_t> g_pinned;
void free_pinned(void* p) {
  {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    g_pinned.erase(static_cast<const char*>(p));
  }
  c10::free_cpu(p);
}
struct PinnedAllocator final : public c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = n ? c10::alloc_cpu(n) : nullptr;
    if (p) {
      std::lock_guard<std::mutex> lock(g_pinned_mu);
      g_pinned.emplace(static_cast<const char*>(p), n);
    }
    return {p, p, &free_pinned, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &free_pinned; }
  void copy_data(void* dst, const void* src, size_t n) const override { default_copy_data(dst, src, n); }
};
PinnedAllocator g_pinned_allocator;
} // namespace

c10::Allocator* device_allocator(c10::DeviceIndex index) { return &g_per_device[resolve(index)]; }

const c10::Device& trn_device(c10::DeviceIndex index) {
  static const std::vector<c10::Device> devices = [] {  // built once: Device() validates
    std::vector<c10::Device> v;
    for (int i = 0; i < kMaxDevices; ++i)
      v.emplace_back(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(i));
    return v;
  }();
  return devices[index];
}

c10::DataPtr adopt(c10::Storage cpu_storage, c10::DeviceIndex d) {
  void* p = cpu_storage.mutable_data();
  auto a = std::make_unique<Adopted>(p, cpu_storage.nbytes(), d);
  book(a.get());
  a->cpu = std::move(cpu_storage);
  return {p, a.release(), &free_adopted, trn_device(d)};
}

c10::DataPtr adopt_ptr(c10::DataPtr& cpu, size_t n, c10::DeviceIndex d) {
  void* p = cpu.get();
  auto a = std::make_unique<AdoptedPtr>(p, n, d);
  book(a.get());  // may throw OutOfMemoryError; `cpu` is untouched then
  a->cpu = std::move(cpu);
  return {p, a.release(), &free_adopted_ptr, trn_device(d)};
}

bool device_of_ptr(const void* ptr, c10::DeviceIndex* out) {
  for (c10::DeviceIndex d = 0; d < device_count(); ++d) {
    auto& s = g_state[d];
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto* m = s.live.next; m != &s.live; m = m->next) {
      auto b = static_cast<const char*>(m->ptr);
      if (ptr >= m->ptr && static_cast<const char*>(ptr) < b + std::max<size_t>(m->bytes, 1)) {
        *out = d;
        return true;
      }
    }
  }
  return false;
}

c10::Allocator* pinned_allocator() { return &g_pinned_allocator; }

bool is_pinned(const void* ptr) {
  auto p = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(g_pinned_mu);
  auto it = g_pinned.upper_bound(p);  // the first block starting after p
  if (it == g_pinned.begin()) return false;
  --it;
  return p < it->first + std::max<size_t>(it->second, 1);
}

void set_capacity(c10::DeviceIndex index, int64_t bytes) {
  TORCH_CHECK(bytes >= 0, "trn: capacity must be >= 0 bytes, got ", bytes);
  auto& s = g_state[resolve(index)];
  std::lock_guard<std::mutex> lock(s.mu);
  s.capacity = bytes;
}

int64_t capacity(c10::DeviceIndex index) {
  auto& s = g_state[resolve(index)];
  std::lock_guard<std::mutex> lock(s.mu);
  return s.capacity ? s.capacity : physical_ram();
}

} // namespace trn
