"""aiter.ops.triton.quant.dynamic_mxfp4_quant (aiter_semantics.md section 1.1)."""
from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before Triton is imported: it fixes interpreted vs compiled at decoration

import torch  # noqa: E402
import triton  # noqa: E402

from .. import _vectorized  # noqa: E402
from .._triton_kernels.quant.quant import _dynamic_mxfp4_quant_kernel, _mxfp4_quant_op  # noqa: E402

__all__ = ["dynamic_mxfp4_quant", "_mxfp4_quant_op"]


def dynamic_mxfp4_quant(x: torch.Tensor, scaling_mode: str = "even"):
    """x [M, N] (any float dtype, any strides) -> (uint8 codes [M, N//2] contiguous, uint8 E8M0 scales
    [M, cdiv(N, 32)] with strides (1, M)). ``scaling_mode`` is ignored, as in aiter."""
    M, N = x.shape
    assert (N // 2) % 2 == 0
    if _vectorized.serves(x) and _vectorized.quantizes(x, N):
        return _vectorized.dynamic_mxfp4_quant(x)
    group = 32
    x_fp4 = torch.empty((M, N // 2), dtype=torch.uint8, device=x.device)
    # Allocated transposed, so the scales come back column-major like aiter's.
    blockscale_e8m0 = torch.empty(((N + group - 1) // group, M), dtype=torch.uint8, device=x.device).T

    # aiter's launch heuristic: tiles change neither values nor layout, only which program computes what.
    if M <= 32:
        num_iter, block_m, block_n, num_warps = 1, triton.next_power_of_2(M), 32, 1
    else:
        num_iter, block_m, block_n, num_warps = 4, 64, 64, 4
        if N <= 16384:
            block_m, block_n = 32, 128
    if N <= 1024:
        num_iter, num_warps = 1, 4
        block_n = max(32, min(256, triton.next_power_of_2(N)))
        block_m = min(8, triton.next_power_of_2(M))
    num_stages = 1 if num_iter == 1 else 2

    # waves_per_eu is an AMD launch option; other backends reject it (the emulation also runs on NVIDIA GPUs).
    amd_options = {"waves_per_eu": 0} if torch.version.hip else {}
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n * num_iter))
    _dynamic_mxfp4_quant_kernel[grid](
        x, x_fp4, blockscale_e8m0, *x.stride(), *x_fp4.stride(), *blockscale_e8m0.stride(),
        M=M, N=N, MXFP4_QUANT_BLOCK_SIZE=group, SCALING_MODE=0, NUM_ITER=num_iter,
        BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n, NUM_STAGES=num_stages, num_warps=num_warps,
        num_stages=1, **amd_options,
    )
    return x_fp4, blockscale_e8m0
