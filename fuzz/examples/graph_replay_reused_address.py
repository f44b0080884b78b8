#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Hazard example: a CUDA-graph-style replay keyed on input addresses.

The first call is "captured": its input addresses, shapes and result are recorded. Any later call
whose inputs sit at the same addresses with the same shapes is "replayed", returning the recorded
result whatever the tensors now hold: new values written in place, or new tensors the allocator put
at the old addresses (the leaderboard's recheck loop alternates between two address sets). The
official test mode makes one call per input and cannot see it. Expected verdicts: the stale-state
ones with reused addresses fail (in place, reallocated, recheck); a new shape (A at a new address)
and everything else pass.
"""
from correct_reference_style import dequantize_weights, gemm  # the arithmetic; only the replay differs
from task import input_t, output_t

_captured = None  # (addresses and shapes of the first call's inputs, its result)


def _signature(data) -> tuple:
    return tuple(None if t is None else (t.data_ptr(), tuple(t.shape)) for t in data)


def custom_kernel(data: input_t) -> output_t:
    global _captured
    if _captured is not None and _captured[0] == _signature(data):
        return _captured[1].clone()  # "replay": the recorded launch, not the current values
    A, _, B_q, _, B_scale_sh = data
    y = gemm(A, dequantize_weights(B_q, B_scale_sh))
    if _captured is None:
        _captured = (_signature(data), y.clone())
    return y
