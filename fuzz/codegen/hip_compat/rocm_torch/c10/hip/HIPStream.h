// Stand-in (declarations only) for ROCm PyTorch's c10/hip/HIPStream.h: see ../../README.md.
#pragma once
#include <hip/hip_runtime.h>
#include <c10/core/Device.h>
#include <c10/core/Stream.h>

namespace c10 {
namespace hip {
class HIPStream {
 public:
  explicit HIPStream(c10::Stream stream);
  hipStream_t stream() const;
  operator hipStream_t() const;
  operator c10::Stream() const;
  c10::DeviceIndex device_index() const;
  c10::Device device() const;
  void synchronize() const;
};
HIPStream getCurrentHIPStream(c10::DeviceIndex device_index = -1);
HIPStream getDefaultHIPStream(c10::DeviceIndex device_index = -1);
HIPStream getStreamFromPool(bool is_high_priority = false, c10::DeviceIndex device = -1);
void setCurrentHIPStream(HIPStream stream);
}  // namespace hip
}  // namespace c10
