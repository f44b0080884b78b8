#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission: pads A's K up to a multiple of 256 in a buffer from ``torch.empty`` and never
writes the padding columns. B's padding is zero, so finite garbage adds nothing; but when the allocator
hands back bytes that read as NaN or Inf in bf16 (a freed fp4 or scale buffer often does), the padding
group quantizes to NaN and NaN x 0 poisons every output element of that row. On a quiet CPU the fresh
buffer is often zero and the output looks right. Expected verdicts: uninitialised fails, naming the
allocating line, whenever K is not a multiple of 256 (correctness may pass by luck). Clean twin:
k_tail_padding."""
import torch

from k_tail_padding import padded_gemm
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    return padded_gemm(data, torch.empty)  # the bug: the padding columns are never written
