"""The judge and the stand-ins, in two folders that never mix the wrong way:

- ``reference/oracle/``: the oracle, a pure-PyTorch MXFP4 reference bit-exact with aiter's competition
  semantics (codecs, quantizer, layouts, the exact product and its derived bound). It imports nothing
  from ``reference.emulation`` or ``kernels``: an oracle that shares code with its subject hides the bugs
  they share (fuzz/unit/test_layering.py enforces it). This package re-exports its API.
- ``reference/emulation/``: what stands in for the runner where it is absent (the emulated aiter, the
  gfx950 instruction model, the patched Triton interpreter, the CPU standing in for the CUDA device, HIP
  builds without ROCm). It may use the oracle, never ``kernels``.
"""
from reference.oracle.e2m1 import decode_e2m1, encode_e2m1, pack_e2m1, unpack_e2m1
from reference.oracle.e8m0 import SCALE_RULES, decode_e8m0, encode_scale, scale_exponent
from reference.oracle.gemm import (
    ExactProduct,
    accumulation_bound,
    acceptable_range,
    exact_gemm,
    exact_gemm_from_inputs,
    reference_output,
    round_to_bf16,
)
from reference.oracle.inputs import generate_input, quantize_weights
from reference.oracle.layouts import e8m0_shuffle, e8m0_unshuffle, shuffle_weight, unshuffle_weight
from reference.oracle.quant import dequantize_mxfp4, quantize_mxfp4

__all__ = [n for n in dir() if not n.startswith("_")]
