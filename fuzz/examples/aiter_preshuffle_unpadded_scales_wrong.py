#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, wrong twin of aiter_preshuffle_unpadded_scales: it passes the shuffled scales as
their plain (N, K / 32) rows, one row per weight row, so aiter's kernel, reading (N // 32)-row
strides, takes most scales from the wrong bytes. aiter checks no shape: the runner runs it and fails it."""
import torch

from aiter_preshuffle_unpadded_scales import gemm
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    return gemm(data, scales=lambda B_scale_sh, n: B_scale_sh[:n].view(torch.uint8))
