#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of hip_module_aiter_asm: the same launch of aiter's f4gemm code object with
half of B's scale row stride in the argument buffer, so the kernel reads most rows' scales from the wrong
place. The CPU tier runs the launch as the emulated aiter's model of that kernel and fails it."""
from hip_module_aiter_asm import gemm
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    return gemm(data, scale_stride_halved=True)
