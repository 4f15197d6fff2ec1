// Allocation history of the trn allocator for torch.trn.memory._record_memory_history() and
// _snapshot(), in the format of torch.cuda.memory._snapshot() that torch.cuda._memory_viz reads.
//
// allocator.cpp calls record_memory_event() on every booking while recording is on; each event
// keeps a CapturedTraceback (Python frames, optionally C++), symbolized only when a snapshot is
// taken, as CUDA's caching allocator does. trn does not cache: every allocation is its own
// segment, so a segment holds exactly one block.
#include <torch/csrc/profiler/combined_traceback.h>
#include <torch/extension.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

// from torch/csrc/profiler/python/combined_traceback.h, which needs nlohmann/json (not shipped)
namespace torch {
std::vector<pybind11::object> py_symbolize(std::vector<CapturedTraceback*>& to_symbolize);
}  // namespace torch

namespace trn {
namespace {

struct Event {
  bool alloc;
  c10::DeviceIndex device;
  uintptr_t addr;
  size_t size;
  int64_t time_us;
  std::shared_ptr<torch::CapturedTraceback> frames;  // null: not recorded (context off / free)
};

struct Live {
  c10::DeviceIndex device;
  size_t size;
  std::shared_ptr<torch::CapturedTraceback> frames;
};

std::atomic<bool> g_on{false};
std::mutex g_mu;
bool g_stacks = true;   // guarded by g_mu
bool g_cpp = false;     // guarded by g_mu
size_t g_max_entries = 0;  // 0: unbounded
std::deque<Event> g_events;                      // guarded by g_mu
std::unordered_map<uintptr_t, Live> g_live;      // guarded by g_mu

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void record_history(bool enabled, bool stacks, bool cpp, size_t max_entries) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_stacks = stacks;
  g_cpp = cpp;
  g_max_entries = max_entries;
  if (!enabled) {
    g_events.clear();
    g_live.clear();
  }
  g_on = enabled;
}

py::list symbolize(std::vector<torch::CapturedTraceback*>& tbs) {
  py::list out;
  if (tbs.empty()) return out;
  for (auto& o : torch::py_symbolize(tbs)) out.append(o);
  return out;
}

py::dict snapshot() {
  std::vector<Event> events;
  std::vector<std::pair<uintptr_t, Live>> live;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    events.assign(g_events.begin(), g_events.end());
    live.assign(g_live.begin(), g_live.end());
  }
  // symbolize every recorded traceback in one batch (shared frames are resolved once)
  std::vector<torch::CapturedTraceback*> tbs;
  for (auto& e : events) if (e.frames) tbs.push_back(e.frames.get());
  for (auto& l : live) if (l.second.frames) tbs.push_back(l.second.frames.get());
  py::list symbols;
  {
    py::gil_scoped_acquire gil;
    symbols = symbolize(tbs);
  }
  size_t next = 0;
  auto frames_of = [&](const std::shared_ptr<torch::CapturedTraceback>& f) -> py::object {
    return f ? py::object(symbols[next++]) : py::object(py::list());
  };

  int max_device = -1;
  for (auto& e : events) max_device = std::max<int>(max_device, e.device);
  for (auto& l : live) max_device = std::max<int>(max_device, l.second.device);
  py::list device_traces;
  std::vector<py::list> per_device(static_cast<size_t>(max_device + 1));
  for (auto& e : events) {
    auto frames = frames_of(e.frames);
    auto entry = [&](const char* action) {
      py::dict d;
      d["action"] = action;
      d["addr"] = e.addr;
      d["size"] = e.size;
      d["stream"] = 0;
      d["time_us"] = e.time_us;
      d["frames"] = frames;
      return d;
    };
    auto& trace = per_device[static_cast<size_t>(e.device)];
    if (e.alloc) {
      trace.append(entry("segment_alloc"));
      trace.append(entry("alloc"));
    } else {
      trace.append(entry("free_requested"));
      trace.append(entry("free_completed"));
      trace.append(entry("segment_free"));
    }
  }
  for (auto& t : per_device) device_traces.append(t);

  py::list segments;
  for (auto& [addr, l] : live) {
    auto frames = frames_of(l.frames);
    py::dict block;
    block["address"] = addr;
    block["size"] = l.size;
    block["requested_size"] = l.size;
    block["state"] = "active_allocated";
    block["frames"] = frames;
    py::dict seg;
    seg["device"] = static_cast<int>(l.device);
    seg["address"] = addr;
    seg["total_size"] = l.size;
    seg["allocated_size"] = l.size;
    seg["active_size"] = l.size;
    seg["requested_size"] = l.size;
    seg["stream"] = 0;
    seg["segment_type"] = "large";
    seg["segment_pool_id"] = py::make_tuple(0, 0);
    seg["is_expandable"] = false;
    seg["frames"] = frames;
    py::list blocks;
    blocks.append(block);
    seg["blocks"] = blocks;
    segments.append(seg);
  }
  py::dict out;
  out["segments"] = segments;
  out["device_traces"] = device_traces;
  py::dict settings;
  settings["PYTORCH_TRN_ALLOC_CONF"] = "";
  out["allocator_settings"] = settings;
  return out;
}

}  // namespace

bool memory_history_on() {
  return g_on.load(std::memory_order_relaxed);
}

void record_memory_event(c10::DeviceIndex d, const void* p, size_t n, bool alloc) {
  bool stacks, cpp;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    stacks = g_stacks;
    cpp = g_cpp;
  }
  std::shared_ptr<torch::CapturedTraceback> tb;
  if (alloc && stacks) {
    tb = torch::CapturedTraceback::gather(/*python=*/true, /*script=*/false, /*cpp=*/cpp);
  }
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_on) return;
  if (alloc) {
    g_live[addr] = Live{d, n, tb};
  } else {
    g_live.erase(addr);
  }
  g_events.push_back(Event{alloc, d, addr, n, now_us(), tb});
  if (g_max_entries && g_events.size() > g_max_entries) g_events.pop_front();
}

void bind_memory_trace(py::module& m) {
  m.def("record_memory_history", &record_history, py::arg("enabled"), py::arg("stacks"),
        py::arg("cpp"), py::arg("max_entries"));
  m.def("memory_snapshot", &snapshot);
}

}  // namespace trn
