#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission that imports a package the runner has and this machine may lack: FlyDSL's MLIR
bindings (``_mlir``, installed on the runner by aiter's requirements: flydsl==0.0.1.dev95158637).

Real FlyDSL files build their kernel with ``_mlir.ir``; this one only imports it, then computes the
reference-style GEMM, so nothing here says whether a FlyDSL kernel is right. Where ``_mlir`` is missing,
``loads`` is NOT RUN naming the package (reference/emulation/runner_image.py), never the file's FAIL.
"""
from _mlir import ir  # noqa: F401

from correct_reference_style import dequantize_weights, gemm
from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    A, _, B_q, _, B_scale_sh = data
    return gemm(A, dequantize_weights(B_q, B_scale_sh))
