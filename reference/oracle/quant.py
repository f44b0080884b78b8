"""MXFP4 block quantization with aiter ``dynamic_mxfp4_quant`` semantics, and its inverse.

One E8M0 scale per 32 consecutive elements along the last dim (K). Per block (section 1.2-1.3 of
aiter_semantics.md):

    amax = max |x| over the block, NaN ignored unless the whole block is NaN
    s    = scale_exponent(amax, rule)                  # "even" by default
    qx   = x * 2^-s  computed in fp32                  # a multiply, as aiter does
    code = encode_e2m1(qx, rounding)                   # RNE, saturate to +-6

What ``x * 2^-s`` is for a NaN element is not IEEE-determined, and its e2m1 code comes from its bits
(aiter's conversion reads the fp32 pattern), so ``nan`` names the arithmetic that computed it:

| nan        | qx for a NaN x                        | code of 0x7FC0 / 0xFFC0 | who computes it so                     |
|------------|---------------------------------------|-------------------------|----------------------------------------|
| payload    | x quieted, sign and payload kept      | 0x3 (+1.5) / 0xB (-1.5) | x86/numpy (the CPU tier); IEEE 754's recommendation; AMD GPUs in IEEE mode (the default for compute) |
| canonical  | 0x7FFFFFFF, whatever x was            | 0x4 (+2) / 0x4 (+2)     | NVIDIA GPUs: fp32 arithmetic returns the canonical NaN (Triton and torch, measured on H200) |
| saturate   | +-Inf with x's sign                   | 0x7 (+6) / 0xF (-6)     | a conversion that maps NaN to +-max: gfx950's v_cvt_scalef32_pk_fp4_* as AMD's software models describe it (assumed) |
| canonical_max | as canonical; and an all-NaN block's amax is 0x7FFFFFFF too (scale byte 0, below) | 0x4 / 0x4 | NVIDIA GPUs again, for a quantizer whose block max is fp32 arithmetic (aiter's `tl.max`: PTX max of two NaNs is the canonical NaN) |

The amax of an all-NaN block is a NaN whose bits decide its scale through the even rule's bit trick:
a quiet NaN 0x7FC00000 rounds to +Inf (byte 254); the canonical NaN 0x7FFFFFFF carries into the sign
bit and rounds to 0 (byte 0). Every rule but ``canonical_max`` takes the quiet NaN (a max that keeps a
payload, or a kernel that maps an all-NaN block to Inf as the spec reads).

The value is fixed here, not left to the device the oracle runs on, so the oracle says the same on
every device.

Outputs are row-major: packed codes uint8 [M, K/2] (element 2j in the low nibble of byte j) and
scale bytes uint8 [M, K/32]. (aiter returns its scales column-major; that is a layout detail the
emulation reproduces, not part of the math.)
"""
from __future__ import annotations

import torch

from reference.oracle.e2m1 import decode_e2m1, encode_e2m1, pack_e2m1, unpack_e2m1
from reference.oracle.e8m0 import decode_e8m0, encode_scale, scale_exponent

BLOCK = 32
_FLOAT_INPUTS = (torch.bfloat16, torch.float16, torch.float32)
NAN_RESULTS = ("payload", "canonical", "saturate", "canonical_max")
_QUIET_BIT = 0x00400000
_QUIET_NAN = 0x7FC00000
_CANONICAL_NAN = 0x7FFFFFFF


def check_matrix(x: torch.Tensor, name: str, dtypes: tuple, k_multiple: int) -> None:
    """Raise a clear TypeError/ValueError unless x is a 2-D tensor of an allowed dtype with K % k_multiple == 0."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"{name} must be 2-D [rows, K], got {x.dim()}-D shape {tuple(x.shape)}")
    if x.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype in {[str(d) for d in dtypes]}, got {x.dtype}")
    if x.shape[1] % k_multiple:
        raise ValueError(
            f"{name}: K={x.shape[1]} must be a multiple of {k_multiple} (one E8M0 scale per {BLOCK} elements)"
        )


def block_amax(x32: torch.Tensor, nan: str = "payload") -> torch.Tensor:
    """[M, K] fp32 -> [M, K/32] max |x| per block; NaN elements ignored unless all 32 are NaN
    (Triton's tl.max lowers to maxnum). An all-NaN block's amax is the quiet NaN 0x7FC00000, or the
    canonical 0x7FFFFFFF under the ``canonical_max`` rule (see the module docstring)."""
    blocks = x32.abs().reshape(x32.shape[0], -1, BLOCK)
    is_nan = torch.isnan(blocks)
    amax = torch.where(is_nan, torch.zeros_like(blocks), blocks).amax(dim=-1)
    bits = _CANONICAL_NAN if nan == "canonical_max" else _QUIET_NAN
    nan_amax = torch.full(amax.shape, bits, dtype=torch.int32, device=amax.device).view(torch.float32)
    return torch.where(is_nan.all(dim=-1), nan_amax, amax)


def power_of_two(e: torch.Tensor) -> torch.Tensor:
    """Exact fp32 2^e for integer e in [-127, 127], built from its bits: torch.exp2 is not exact on
    every device (CUDA gives 2^-127 one ulp low)."""
    e = e.to(torch.int32)
    bits = torch.where(e == -127, torch.full_like(e, 0x00400000), (e + 127) << 23)
    return bits.view(torch.float32)


def scaled_nan(x32: torch.Tensor, nan: str) -> torch.Tensor:
    """fp32 ``qx`` for NaN elements of ``x32`` under the ``nan`` rule (see the module docstring);
    the other elements' values are meaningless."""
    bits = x32.view(torch.int32)
    if nan == "payload":
        return (bits | _QUIET_BIT).view(torch.float32)
    if nan in ("canonical", "canonical_max"):
        return torch.full_like(bits, _CANONICAL_NAN).view(torch.float32)
    return torch.copysign(torch.full_like(x32, float("inf")), x32)


# What the quantizer's 2^-s is at s = 127 (an Inf or NaN block, or amax in [1.75 * 2^127, 2^128)): 2^-127 is an
# fp32 subnormal. "kept": exactly it (numpy, the Triton interpreter, aiter's semantics as written). "flushed": 0,
# what ``tl.exp2(-s)`` gives on gfx950 (Triton lowers it to llvm.amdgcn.exp2.f32, a bare v_exp_f32, which LLVM's
# own exp2 lowering scales around because it returns no subnormals: AOT probe, docs/tier_fidelity.md) and on
# NVIDIA (ex2.approx.ftz.f32). Then finite elements of the block quantize to 0 and an Inf to Inf * 0 = NaN.
SCALE127 = ("kept", "flushed")


def has_top_scale(x: torch.Tensor) -> bool:
    """Whether a block of ``x`` [M, K] gets s = 127, where SCALE127's two readings differ."""
    x32 = x.to(torch.float32)
    return bool((scale_exponent(block_amax(x32)) == 127).any())


def quantize_mxfp4(x: torch.Tensor, scale_rule: str = "even", rounding: str = "rne", nan: str = "payload",
                   scale127: str = "kept"):
    """x [M, K] (bf16/fp16/fp32, any strides) -> (packed uint8 [M, K/2], scales uint8 [M, K/32]).
    ``nan``: what the scaling multiply makes of a NaN element (NAN_RESULTS); a scale depends on it only
    in an all-NaN block (``canonical_max``). ``scale127``: what 2^-127 is (SCALE127)."""
    check_matrix(x, "x", _FLOAT_INPUTS, BLOCK)
    if nan not in NAN_RESULTS:
        raise ValueError(f"nan must be one of {NAN_RESULTS}, got {nan!r}")
    if scale127 not in SCALE127:
        raise ValueError(f"scale127 must be one of {SCALE127}, got {scale127!r}")
    x32 = x.to(torch.float32).contiguous()
    s = scale_exponent(block_amax(x32, nan), scale_rule)
    quant_scale = power_of_two(-s)  # 2^127 .. 2^-127, exact
    is_nan = torch.isnan(x32)
    if scale127 == "flushed":
        top = (s == 127).repeat_interleave(BLOCK, dim=1)
        quant_scale = torch.where(s == 127, torch.zeros_like(quant_scale), quant_scale)
        # Inf * 0 is a NaN the multiply makes: a quiet NaN with the Inf's sign, then the tier's NaN rule
        made = top & torch.isinf(x32)
        x32 = torch.where(made, torch.copysign(torch.full_like(x32, float("nan")), x32), x32)
        is_nan = is_nan | made
    qx = (x32.reshape(x32.shape[0], -1, BLOCK) * quant_scale[..., None]).reshape(x32.shape)
    qx = torch.where(is_nan, scaled_nan(x32, nan), qx)
    codes = encode_e2m1(qx, rounding)
    return pack_e2m1(codes), encode_scale(s)


def dequantize_mxfp4(packed: torch.Tensor, scales: torch.Tensor, dtype=torch.float64) -> torch.Tensor:
    """(packed [M, K/2], scales [M, K/32]) -> values [M, K]; exact in float64 (fp32 can overflow:
    6 * 2^127 is not an fp32 number)."""
    packed = packed.view(torch.uint8)
    scales = scales.view(torch.uint8)
    if packed.dim() != 2 or scales.dim() != 2:
        raise ValueError(f"dequantize_mxfp4 expects 2-D inputs, got {tuple(packed.shape)} and {tuple(scales.shape)}")
    k = packed.shape[1] * 2
    if scales.shape != (packed.shape[0], k // BLOCK) or k % BLOCK:
        raise ValueError(
            f"scales shape {tuple(scales.shape)} does not match packed {tuple(packed.shape)}: "
            f"expected ({packed.shape[0]}, {k // BLOCK}) with K={k} a multiple of {BLOCK}"
        )
    values = decode_e2m1(unpack_e2m1(packed)).to(dtype)
    factors = decode_e8m0(scales).to(dtype).repeat_interleave(BLOCK, dim=1)
    return values * factors
