"""A numpy model of gfx950's scaled fp4 conversions, and a hook that runs it for Triton inline asm.

The instructions modelled (one output byte = two e2m1 codes, the first/low element in the low nibble):

    v_cvt_scalef32_pk_fp4_bf16  vdst, src (two bf16 in a u32, element 0 in bits 0-15), scale (f32)
    v_cvt_scalef32_pk_fp4_f32   vdst, src0 (f32, element 0), src1 (f32, element 1), scale (f32)

Each element becomes e2m1(x / 2^(E - 127)), where E is the exponent field of ``scale``.

| behaviour                          | model                          | status (evidence below)   |
|------------------------------------|--------------------------------|---------------------------|
| the scale divides                  | x / 2^(E - 127)                | documented [1]            |
| rounding                           | nearest, ties to even, sticky  | documented [2]            |
| finite values beyond 6             | +-6 (code 7), sign kept        | documented [3]            |
| -0 and values rounding to zero     | sign kept (-0 -> 0x8)          | documented [3]            |
| result width                       | the low byte only              | documented [4]            |
| scale mantissa bits                | ignored                        | assumed [5]               |
| scale E = 0 (0.0f, denormal 2^-127)| divides by 2^-127              | assumed [5]               |
| scale E = 255 (Inf/NaN scale)      | +-6                            | assumed [6]               |
| Inf input                          | +-6                            | assumed [6]               |
| NaN input                          | +-6 by NaN's sign bit          | assumed [6]               |
| subnormal input                    | exact value, no flush          | assumed [6]               |
| vdst's upper 3 bytes               | the scale's upper 3 bytes      | assumed [7]               |

[1] research/aiter_semantics.md section 7: every aiter caller passes the dequantization scale 2^s, and
    aiter's non-gfx950 fallback computes ``x * (1 / scale)`` for the same operand.
[2] aiter issue #974 (the MI355 instruction gives 0 for 0.25 and 0.5 for 0.25 + ulp) and PR #3992 ("the
    gfx950 hardware conversion instruction ... already performs RNE").
[3] e2m1 has no Inf/NaN; aiter's fallback saturates and every aiter caller relies on it.
[4] LLVM MC for gfx950: op_sel[3:2] picks the destination byte; none given means byte 0.
[5] aiter's comment that the fp4 store "consumes the e8m0 byte directly", and the gfx1250 ROCDL docs
    ("exponent part of scale"). aiter only ever passes exact powers of two, so nothing exercises this.
[6] No AMD ISA text was found. Two AMD-authored software models agree: a C++ gfx950 model,
    ``gfx950_float4_impl.h`` (namespace ``gfx950_f4_impl``; the code index did not name its repository),
    whose ``f32_to_fp4`` maps NaN, Inf and a 0xFF scale exponent to sign | 0x7, reads only the scale's
    exponent and normalises subnormal inputs; and AMD's emulator rocjitsu (ROCm/rocm-systems,
    ``emulation/rocjitsu``; PR #6870 added the ``v_cvt_scalef32_*`` family), whose newer
    ``f32_to_ocp_mx_rne`` maps NaN and Inf to sign | max (an older revision returned 0 for NaN).
    aiter's Triton software path instead gives NaN a payload-dependent code (0x3 for the quiet NaN),
    so the two quantizer paths differ on NaN elements only. ``NAN_MAGNITUDE_CODE`` is the switch.
[7] The instruction writes one byte and leaves the rest of vdst; with an ``=v`` constraint the
    register allocator may make vdst the scale's register (seen in a gfx950 AOT compile:
    ``v_cvt_scalef32_pk_fp4_bf16 v2, v4, v2``). Modelling that makes a missing ``& 0xFF`` visible.
"""
from __future__ import annotations

import re

import numpy as np

# e2m1 magnitude code of NaN inputs: assumed +-6.0 (note [6]); aiter's software path gives 0x3.
NAN_MAGNITUDE_CODE = 0x7
_MAX_MAGNITUDE_CODE = 0x7

# Midpoints between neighbouring e2m1 magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}: a tie goes to the neighbour
# with the even code, which is the lower one for these ...
_TIES_TO_LOWER = np.array([0.25, 1.25, 2.5, 5.0])
# ... and the upper one for these.
_TIES_TO_UPPER = np.array([0.75, 1.75, 3.5])


class UnsupportedInlineAsm(NotImplementedError):
    """Inline asm that the interpreter cannot evaluate because no model exists for it."""


def e2m1_codes(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """e2m1 codes (uint8, sign in bit 3) of ``values / 2^(E - 127)``, E the exponent field of ``scale``.

    ``values`` is float32 (bf16 inputs widen exactly), ``scale`` float32; they broadcast.
    """
    values = np.asarray(values, dtype=np.float32)
    scale_exponent = (np.asarray(scale, dtype=np.float32).view(np.uint32) >> 23) & 0xFF
    # float64 holds the quotient exactly: 24 significant bits, exponents within +-300. NaN and Inf
    # inputs are expected here, so their floating-point warnings are noise.
    with np.errstate(invalid="ignore", over="ignore"):
        quotient = np.ldexp(values.astype(np.float64), 127 - scale_exponent.astype(np.int64))
    magnitude = np.abs(quotient)[..., None]
    magnitude_code = (magnitude > _TIES_TO_LOWER).sum(-1) + (magnitude >= _TIES_TO_UPPER).sum(-1)
    magnitude_code = np.where(np.isnan(values), NAN_MAGNITUDE_CODE, magnitude_code)
    magnitude_code = np.where(scale_exponent == 0xFF, _MAX_MAGNITUDE_CODE, magnitude_code)
    sign = (values.view(np.uint32) >> 31) << 3
    return (magnitude_code | sign).astype(np.uint8)


def _with_untouched_upper_bytes(low_byte: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return (np.asarray(scale, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFFF00)) | low_byte


def v_cvt_scalef32_pk_fp4_bf16(src: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Model of ``v_cvt_scalef32_pk_fp4_bf16 vdst, src, scale``: uint32 results (see module docstring)."""
    src = np.asarray(src).view(np.uint32)
    low = ((src & 0xFFFF) << 16).view(np.float32)
    high = (src & np.uint32(0xFFFF0000)).view(np.float32)
    packed = e2m1_codes(low, scale).astype(np.uint32) | (e2m1_codes(high, scale).astype(np.uint32) << 4)
    return _with_untouched_upper_bytes(packed, scale)


def v_cvt_scalef32_pk_fp4_f32(src0: np.ndarray, src1: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Model of ``v_cvt_scalef32_pk_fp4_f32 vdst, src0, src1, scale``: uint32 results."""
    packed = e2m1_codes(src0, scale).astype(np.uint32) | (e2m1_codes(src1, scale).astype(np.uint32) << 4)
    return _with_untouched_upper_bytes(packed, scale)


def _canonical_asm(asm: str) -> str:
    return re.sub(r"\s*,\s*", ",", " ".join(asm.split()))


# canonical asm -> (model, how the model reads each 32-bit input register)
_MODELS = {
    _canonical_asm("v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2"): (v_cvt_scalef32_pk_fp4_bf16, (np.uint32, np.float32)),
    _canonical_asm("v_cvt_scalef32_pk_fp4_f32 $0, $1, $2, $3"):
        (v_cvt_scalef32_pk_fp4_f32, (np.float32, np.float32, np.float32)),
}
SUPPORTED_ASM = tuple(_MODELS)


def evaluate_inline_asm(asm: str, args: list[np.ndarray], pack: int) -> np.ndarray:
    """Evaluate a supported asm string elementwise over ``args`` (broadcast); uint32 result.

    Operands are registers: any 32-bit dtype is taken by its bits, as the hardware would.
    """
    canonical = _canonical_asm(asm)
    if canonical not in _MODELS:
        raise UnsupportedInlineAsm(
            f"no interpreter model for inline asm {asm!r}; supported: {', '.join(map(repr, SUPPORTED_ASM))}")
    model, register_types = _MODELS[canonical]
    if pack != 1:
        raise UnsupportedInlineAsm(f"inline asm {asm!r} is modelled for pack=1 only, got pack={pack}")
    if len(args) != len(register_types):
        raise UnsupportedInlineAsm(f"inline asm {asm!r} takes {len(register_types)} operands, got {len(args)}")
    args = np.broadcast_arrays(*(np.asarray(a) for a in args))
    if any(a.dtype.itemsize != 4 for a in args):
        raise UnsupportedInlineAsm(f"inline asm {asm!r} takes 32-bit operands, got {[str(a.dtype) for a in args]}")
    return model(*(a.view(t) for a, t in zip(args, register_types)))


class _InlineAsmResults:
    """What the interpreter's ``tl.inline_asm_elementwise`` expects back from the builder."""

    def __init__(self, handles):
        self._handles = handles

    def get_result(self, index):
        return self._handles[index]


def _create_inline_asm(self, inlineAsm, constraints, values, type, isPure, pack):  # noqa: A002 (Triton's names)
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype

    if len(type) != 1 or type[0].scalar.primitive_bitwidth != 32:
        raise UnsupportedInlineAsm(f"inline asm {inlineAsm!r} is modelled with one 32-bit result")
    result = evaluate_inline_asm(inlineAsm, [v.data for v in values], pack)
    element_type = type[0].scalar
    return _InlineAsmResults([TensorHandle(result.view(_get_np_dtype(element_type)), element_type)])


def install() -> bool:
    """Let the Triton interpreter evaluate the modelled asm strings; True when the hook is active.

    Idempotent. Does nothing (returns False) when Triton is not interpreting: compiled kernels run the real
    instruction. Any other asm string raises ``UnsupportedInlineAsm`` naming it.
    """
    import triton
    from triton.runtime import interpreter

    if not triton.knobs.runtime.interpret:
        return False
    interpreter.InterpreterBuilder.create_inline_asm = _create_inline_asm
    return True
