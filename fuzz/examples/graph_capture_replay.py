#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: captures its GEMM in a CUDA graph per shape and replays it.

Static input buffers are captured once per shape; every call copies the inputs into them and replays,
which is correct (a replay reads the static buffers' current values). On the CPU tier the graph records
the ATen ops of the capture and replays them on the captured tensors.
"""
import torch

from correct_reference_style import decode, dequantize_weights, quantize_activations
from task import input_t, output_t

_GRAPHS: dict = {}


def _forward(a_static, b_static):
    return (decode(*quantize_activations(a_static)) @ b_static.T).to(torch.bfloat16)


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    b = dequantize_weights(B_q, B_scale_sh)
    key = (tuple(A.shape), tuple(b.shape))
    if key not in _GRAPHS:
        a_static, b_static = A.clone(), b.clone()
        _forward(a_static, b_static)  # warm-up outside the capture, as the CUDA docs ask
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out_static = _forward(a_static, b_static)
        _GRAPHS[key] = (graph, a_static, b_static, out_static)
    graph, a_static, b_static, out_static = _GRAPHS[key]
    a_static.copy_(A)
    b_static.copy_(b)
    graph.replay()
    return out_static.clone()
