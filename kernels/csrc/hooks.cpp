// Extension point: at::PrivateUse1HooksInterface — what ATen asks of "the accelerator":
// device count/current device, generators, pinned host memory, device-from-pointer, and
// resizing a storage's bytes (torch.UntypedStorage.resize_).
#include "trn.h"

#include <ATen/detail/PrivateUse1HooksInterface.h>

namespace trn {

namespace {
struct Hooks final : public at::PrivateUse1HooksInterface {
  void init() const override {}
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }

  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = current_device();
    set_current_device(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    return d >= 0 && d < device_count() ? exchangeDevice(d) : current_device();
  }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override {
    return default_generator(d);
  }
  at::Generator getNewGenerator(c10::DeviceIndex d) const override { return new_generator(d); }

  at::Device getDeviceFromPtr(void* data) const override {
    c10::DeviceIndex d = -1;
    TORCH_CHECK(device_of_ptr(data, &d), "trn: pointer ", data,
                " is not inside any live trn allocation");
    return {c10::DeviceType::PrivateUse1, d};
  }
  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    auto* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
    auto d = storage.device().index();
    auto fresh = device_allocator(d)->allocate(newsize);
    auto keep = std::min(newsize, impl->nbytes());
    if (keep && impl->data()) std::memcpy(fresh.get(), impl->data(), keep);
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

struct Registrar {
  Registrar() { at::RegisterPrivateUse1HooksInterface(new Hooks()); }
} g_registrar;
} // namespace

} // namespace trn
