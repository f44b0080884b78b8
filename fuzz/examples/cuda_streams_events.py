#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: runs on a side stream and times itself with CUDA events.

The first call of each shape times two chunkings with ``torch.cuda.Event(enable_timing=True)`` on a
``torch.cuda.Stream()`` and keeps the faster; results do not depend on the choice. On the CPU tier the
events read the host clock, so the choice is arbitrary but the output is the same.
"""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

_STREAM = torch.cuda.Stream()
_CHOICE: dict = {}


def _run(A, b, rows):
    return torch.cat([gemm(A[i:i + rows], b) for i in range(0, A.shape[0], rows)])


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    b = dequantize_weights(B_q, B_scale_sh)
    key = tuple(A.shape)
    if key not in _CHOICE:
        timings = {}
        for rows in (16, 256):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.cuda.stream(_STREAM):
                start.record()
                _run(A, b, rows)
                end.record()
            end.synchronize()
            timings[rows] = start.elapsed_time(end)
        _CHOICE[key] = min(timings, key=timings.get)
    torch.cuda.current_stream().wait_stream(_STREAM)
    return _run(A, b, _CHOICE[key])
