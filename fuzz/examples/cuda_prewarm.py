#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: hard-codes the runner's device, as real files do.

At import it allocates workspaces with ``device="cuda"``, reads the CU count for an occupancy choice and
synchronizes; inside the call it moves its dequantized weights with ``.cuda()`` / ``.to("cuda")``. All
legal on the runner; on the CPU tier the CUDA device is stood in by the CPU and every verdict passes.
"""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

_WORKSPACE = torch.zeros(32, 8192, dtype=torch.bfloat16, device="cuda")  # prewarm, as real files do
_CUS = torch.cuda.get_device_properties(0).multi_processor_count
_ROWS_PER_CHUNK = 64 if _CUS >= 256 else 32
torch.cuda.synchronize()


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    b = dequantize_weights(B_q, B_scale_sh).cuda()
    chunks = [gemm(A[i:i + _ROWS_PER_CHUNK].to("cuda"), b) for i in range(0, A.shape[0], _ROWS_PER_CHUNK)]
    torch.cuda.synchronize()
    return torch.cat(chunks)
