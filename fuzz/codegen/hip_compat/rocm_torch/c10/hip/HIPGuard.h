// Stand-in (declarations only) for ROCm PyTorch's c10/hip/HIPGuard.h: see ../../README.md.
#pragma once
#include <c10/core/Device.h>
#include <c10/util/Optional.h>
#include <c10/hip/HIPStream.h>

namespace c10 {
namespace hip {
struct HIPGuard {
  explicit HIPGuard(c10::DeviceIndex device_index);
  explicit HIPGuard(c10::Device device);
  void set_device(c10::Device device);
  void set_index(c10::DeviceIndex device_index);
};
struct OptionalHIPGuard {
  OptionalHIPGuard();
  explicit OptionalHIPGuard(c10::Device device);
  explicit OptionalHIPGuard(std::optional<c10::Device> device);
  explicit OptionalHIPGuard(c10::DeviceIndex device_index);
  void set_device(c10::Device device);
  void set_index(c10::DeviceIndex device_index);
  void reset();
};
struct HIPStreamGuard {
  explicit HIPStreamGuard(c10::Stream stream);
};
using HIPGuardMasqueradingAsCUDA = HIPGuard;
using OptionalHIPGuardMasqueradingAsCUDA = OptionalHIPGuard;
using HIPStreamGuardMasqueradingAsCUDA = HIPStreamGuard;
}  // namespace hip
namespace cuda {  // what hipified sources still call it on ROCm PyTorch
using CUDAGuard = hip::HIPGuard;
using OptionalCUDAGuard = hip::OptionalHIPGuard;
using CUDAStreamGuard = hip::HIPStreamGuard;
}  // namespace cuda
}  // namespace c10
namespace at {
namespace cuda {
using c10::cuda::CUDAGuard;
using c10::cuda::OptionalCUDAGuard;
using c10::cuda::CUDAStreamGuard;
}  // namespace cuda
}  // namespace at
