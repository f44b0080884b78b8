#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: the runner runs its HIP, this machine cannot, and its fallback hides that.

It builds a HIP GEMM at import with ``load_inline``. The kernel is fine for gfx950, but it uses inline gfx950
asm, which the CPU model of gfx950 does not run (and a machine without ROCm cannot build at all), so the build
raises here. The file catches that, as real files do, and serves every call with PyTorch operations.

On the runner the HIP builds and serves every call; here only the fallback ran. A PASS here would vouch
for code the runner never runs, so every verdict judged on the calls is NOT RUN, naming the build that did
not run and why. The report keeps the fallback's own result beside it. builds_gfx950 still compiles the HIP
for gfx950. Only if that build failed too, so that the runner would fall back as well, would the verdicts stand.
"""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <torch/extension.h>
__global__ void settle() { asm volatile("s_nop 0"); }
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    settle<<<1, 64>>>();
    return torch::matmul(a, b.t());
}
"""

try:
    from torch.utils.cpp_extension import load_inline

    _EXT = load_inline("mxfp4_unrun_with_fallback", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                       cuda_sources=HIP_SOURCE, functions=["gemm"], extra_cuda_cflags=["--offload-arch=gfx950"])
except Exception as error:  # noqa: BLE001 - what real files do: any build failure means "use the fallback"
    print(f"[HIP BUILD FAILED] {type(error).__name__}: {str(error)[:200]}; using the PyTorch fallback")
    _EXT = None


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    a = decode(*quantize_activations(A))
    b = dequantize_weights(B_q, B_scale_sh)
    if _EXT is not None:
        return _EXT.gemm(a, b).to(torch.bfloat16)
    return (a @ b.t()).to(torch.bfloat16)
