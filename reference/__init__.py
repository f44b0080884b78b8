"""The judge and the stand-ins, in two folders that never mix the wrong way:

- ``reference/oracle/``: the oracle, a pure-PyTorch MXFP4 reference bit-exact with aiter's competition
  semantics (codecs, quantizer, layouts, the exact product and its derived bound). It imports nothing
  from ``reference.emulation`` or ``kernels``: an oracle that shares code with its subject hides the bugs
  they share (fuzz/unit/test_layering.py enforces it). This package re-exports its API.
- ``reference/emulation/``: what stands in for the runner where it is absent (the emulated aiter, the
  gfx950 instruction model, the patched Triton interpreter, the CPU standing in for the CUDA device, HIP
  builds without ROCm). It may use the oracle, never ``kernels``.
"""
# The oracle's API, imported when first asked for (PEP 562): ``import reference.emulation.aiter_modes`` (the
# command line, before it starts the check's worker) must not import torch.
_EXPORTS = {
    "reference.oracle.e2m1": ("decode_e2m1", "encode_e2m1", "pack_e2m1", "unpack_e2m1"),
    "reference.oracle.e8m0": ("SCALE_RULES", "decode_e8m0", "encode_scale", "scale_exponent"),
    "reference.oracle.gemm": ("ExactProduct", "accumulation_bound", "acceptable_range", "exact_gemm",
                              "exact_gemm_from_inputs", "reference_output", "round_to_bf16"),
    "reference.oracle.inputs": ("generate_input", "quantize_weights"),
    "reference.oracle.layouts": ("e8m0_shuffle", "e8m0_unshuffle", "shuffle_weight", "unshuffle_weight"),
    "reference.oracle.quant": ("dequantize_mxfp4", "quantize_mxfp4"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'reference' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
