#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission KernelGuard flags (UNSYNC_MULTISTREAM, telemetry: not filtered by itself): the rows
are split over two side streams and the result is returned without making the caller's stream wait for
them. On a GPU the caller can read the output before the side streams have written it (a race: results
depend on timing, and an event timer on the default stream measures nothing); on the CPU tier streams
run in order, so the race cannot show and every dynamic verdict passes there. Clean twin:
cuda_streams_events (one side stream, and the caller waits for it)."""
import torch

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t

_STREAMS = (torch.cuda.Stream(), torch.cuda.Stream())


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    b = dequantize_weights(B_q, B_scale_sh)
    out = torch.empty((A.shape[0], b.shape[0]), dtype=torch.bfloat16, device=A.device)
    half = -(-A.shape[0] // 2)
    for stream, rows in zip(_STREAMS, (slice(0, half), slice(half, A.shape[0]))):
        with torch.cuda.stream(stream):
            out[rows] = gemm(A[rows], b)
    return out
