#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: dequantized weights cached by B_q's address (and shape).

"The weights never change between calls" holds for one input object, but the caller may write new
values into the same tensors, or free them and allocate new ones that the allocator puts at the same
address: then this serves the old weights. The official test mode makes one call per input and
cannot see it. Expected verdicts: the stale-state ones fail, everything else passes.
"""
from correct_reference_style import dequantize_weights, gemm  # the arithmetic; only the cache differs
from task import input_t, output_t

_weights = {}  # (B_q.data_ptr(), B_q.shape) -> B's dequantized values


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    key = (B_q.data_ptr(), tuple(B_q.shape))
    if key not in _weights:
        _weights[key] = dequantize_weights(B_q, B_scale_sh)
    return gemm(A, _weights[key])
