// hip_cpu for torch extensions (load_inline / load on the CPU tier): the CUDA/HIP parts of ATen and c10
// that a kernel's host code calls (the current stream, the device guard), on the CPU. Tensors on the
// tier's "cuda" device live on the CPU, so their data pointers are host memory the model's kernels read.
#pragma once
#include <hip_cpu_runtime.h>

namespace hipcpu_torch {
struct Stream {
    operator hipStream_t() const { return nullptr; }
    hipStream_t stream() const { return nullptr; }
    int device_index() const { return 0; }
};
}  // namespace hipcpu_torch

namespace at { namespace cuda {
inline ::hipcpu_torch::Stream getCurrentCUDAStream(int = -1) { return {}; }
inline ::hipcpu_torch::Stream getDefaultCUDAStream(int = -1) { return {}; }
}  // namespace cuda
namespace hip {
inline ::hipcpu_torch::Stream getCurrentHIPStream(int = -1) { return {}; }
inline ::hipcpu_torch::Stream getCurrentHIPStreamMasqueradingAsCUDA(int = -1) { return {}; }
}  // namespace hip
}  // namespace at
namespace c10 { namespace cuda {
using ::at::cuda::getCurrentCUDAStream;
struct CUDAGuard { template <class D> explicit CUDAGuard(D) {} };
struct OptionalCUDAGuard { template <class D> explicit OptionalCUDAGuard(D) {} };
}  // namespace cuda
namespace hip {
using ::at::hip::getCurrentHIPStream;
struct HIPGuard { template <class D> explicit HIPGuard(D) {} };
}  // namespace hip
}  // namespace c10
typedef hipStream_t cudaStream_t;
#define C10_CUDA_KERNEL_LAUNCH_CHECK() ((void)0)
#define C10_HIP_KERNEL_LAUNCH_CHECK() ((void)0)
#define AT_CUDA_CHECK(x) ((void)(x))
