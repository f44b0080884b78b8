// Stand-in (declarations only) for ROCm PyTorch's ATen/hip/HIPContext.h: see ../../README.md.
#pragma once
#include <hip/hip_runtime.h>
#include <ATen/Context.h>
#include <c10/hip/HIPStream.h>

namespace c10 {
namespace hip {
using HIPStreamMasqueradingAsCUDA = HIPStream;
HIPStreamMasqueradingAsCUDA getCurrentHIPStreamMasqueradingAsCUDA(c10::DeviceIndex device_index = -1);
}  // namespace hip
}  // namespace c10
namespace at {
namespace hip {
using c10::hip::getCurrentHIPStream;
using c10::hip::getCurrentHIPStreamMasqueradingAsCUDA;
hipDeviceProp_t* getCurrentDeviceProperties();
int warp_size();
}  // namespace hip
namespace cuda {  // on ROCm PyTorch at::cuda answers with HIP objects
c10::hip::HIPStream getCurrentCUDAStream(c10::DeviceIndex device_index = -1);
c10::hip::HIPStream getDefaultCUDAStream(c10::DeviceIndex device_index = -1);
hipDeviceProp_t* getCurrentDeviceProperties();
int warp_size();
}  // namespace cuda
}  // namespace at
