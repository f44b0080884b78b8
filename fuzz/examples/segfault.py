#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: the process dies (SIGSEGV) on the second distinct shape it sees.

Models a workspace sized for the first shape and dereferenced for another one: here a read of
address 0. The official harness runs its four tests in one process and dies on the second; so does
every program of ours that calls two shapes. Expected verdicts: official, contract (two shapes per
program) and stale state with a new shape fail with a crash; everything else passes.
"""
import ctypes

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

_shapes = set()


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    _shapes.add((A.shape[0], B_q.shape[0], A.shape[1]))
    if len(_shapes) > 1:
        ctypes.string_at(0)  # the stale workspace pointer
    return gemm(A, dequantize_weights(B_q, B_scale_sh))
