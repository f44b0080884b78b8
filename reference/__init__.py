"""Pure-PyTorch MXFP4 reference (the oracle) with aiter competition semantics.

The oracle modules import nothing from ``kernels`` or ``reference.emulation``: an oracle that shares
code with its subject hides the bugs they share (a test enforces this).
"""
from reference.e2m1 import decode_e2m1, encode_e2m1, pack_e2m1, unpack_e2m1
from reference.e8m0 import SCALE_RULES, decode_e8m0, encode_scale, scale_exponent
from reference.gemm import (
    ExactProduct,
    accumulation_bound,
    acceptable_range,
    exact_gemm,
    exact_gemm_from_inputs,
    reference_output,
    round_to_bf16,
)
from reference.inputs import generate_input, quantize_weights
from reference.layouts import e8m0_shuffle, e8m0_unshuffle, shuffle_weight, unshuffle_weight
from reference.quant import dequantize_mxfp4, quantize_mxfp4

__all__ = [n for n in dir() if not n.startswith("_")]
