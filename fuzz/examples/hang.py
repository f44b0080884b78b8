#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: hangs on M = 1.

Models a decode-shape path that spin-waits for partial sums no program produces. No official shape
has M = 1 (the smallest is 4), so the official harness cannot see it; the fuzz strategies draw M = 1
first. Expected verdicts: every verdict whose example has M = 1 fails with a timeout; the official
check passes.
"""
import time

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t


def _wait_for_partials(ready) -> None:
    while not ready:  # nothing ever sets it
        time.sleep(0.01)


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    if A.shape[0] == 1:
        _wait_for_partials([])
    return gemm(A, dequantize_weights(B_q, B_scale_sh))
