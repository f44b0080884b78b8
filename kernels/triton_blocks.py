"""``@triton.jit`` building blocks shared by our fused GEMM kernel and the aiter emulation's kernels.

- ``mxfp4_quant_portable``: aiter's post-#975 ``_mxfp4_quant_op`` (even scale rule, RNE e2m1) in plain
  Triton ops, bit for bit (research/aiter_semantics.md sections 1.2-1.3).
- ``mxfp4_quant_gfx950``: the same scales, elements converted by ``v_cvt_scalef32_pk_fp4_bf16``. In the
  interpreter, call ``reference.emulation.gfx950_asm.install()`` before launching.
- ``unshuffle_b_tile`` / ``unshuffle_b_scales_tile``: undo ``shuffle_weight(B_q, (16, 16))`` and
  ``e8m0_shuffle`` on one loaded tile (sections 3 and 2.2).

Interpreter-safe style: no Python ``not``/``and``/``or`` on tensors (the interpreter does not apply them
elementwise), and no float -> uint8 casts of values that can be negative.
"""
import triton
import triton.language as tl


@triton.jit
def _to_float32(x):
    """Exact widening. bf16 goes through its bits: the interpreter's bf16 -> fp32 cast zeroes or garbles
    bf16 subnormals (triton 3.9), while compiled code widens them exactly."""
    if x.dtype == tl.bfloat16:
        return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    return x.to(tl.float32)


@triton.jit
def _even_scale_exponent(x, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """aiter's "even" scale exponent of each group of 32 in an fp32 tile: int32 [BLOCK_M, BLOCK_K // 32].

    s = floor(log2(amax rounded up at mantissa 1.75)) - 2, clamped to [-127, 127]. The rounded amax is 0,
    a power of two or +Inf, so floor(log2) is its exponent field minus 127; reading the field avoids
    depending on log2's accuracy.
    """
    magnitudes = tl.abs(tl.reshape(x, (BLOCK_M, BLOCK_K // 32, 32)))
    # NaN never sets the scale unless the whole group is NaN (aiter's tl.max is maxnum). Selecting it away
    # explicitly keeps that true for signalling NaNs, which IEEE-2008 maxNum (numpy's fmax, behind the
    # interpreter's tl.max) turns into a NaN that drops the elements reduced before it.
    amax = tl.max(tl.where(magnitudes == magnitudes, magnitudes, -1.0), axis=2)
    # All NaN: the spec's quiet-NaN amax rounds to +Inf (byte 254), whatever the payloads.
    amax = tl.where(amax < 0.0, float("inf"), amax)
    rounded = (amax.to(tl.uint32, bitcast=True) + 0x200000) & 0xFF800000
    exponent_field = ((rounded >> 23) & 0xFF).to(tl.int32)
    # Field 255 is +Inf (log2 = inf, clamps to 127); field 0 is 0 (log2 = -inf, clamps to -127).
    s = tl.where(exponent_field == 255, 127, exponent_field - 127 - 2)
    return tl.maximum(s, -127)


@triton.jit
def _scale_byte(s):
    """E8M0 byte of a scale exponent in [-127, 127]: s + 127, so s = -127 gives byte 0 as in aiter."""
    return (s + 127).to(tl.uint8)


@triton.jit
def _pack_nibbles(codes, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """[BLOCK_M, BLOCK_K] codes (low 4 bits used) -> [BLOCK_M, BLOCK_K // 2] bytes, even element low."""
    even, odd = tl.split(tl.reshape(codes.to(tl.uint32), (BLOCK_M, BLOCK_K // 2, 2)))
    return ((even & 0xF) | ((odd & 0xF) << 4)).to(tl.uint8)


@triton.jit
def _e2m1_codes_rne(qx):
    """aiter's post-#975 element conversion of already-scaled fp32 values: uint32 codes, sign in bit 3."""
    bits = qx.to(tl.uint32, bitcast=True)
    sign = bits & 0x80000000
    bits = bits ^ sign
    magnitude = bits.to(tl.float32, bitcast=True)
    saturate = magnitude >= 6.0
    # NaN fails both comparisons and so takes the normal branch, as in aiter.
    denormal = (~saturate) & (magnitude < 1.0)
    # |qx| < 1: adding 2^22 rounds to a multiple of 0.5 (RNE); the mantissa is then 0, 1 or 2.
    denormal_code = ((magnitude + 4194304.0).to(tl.uint32, bitcast=True) - 0x4A800000) & 0xFF
    # 1 <= |qx| < 6: rebias the exponent to e2m1 and round mantissa bit 22 to nearest even.
    odd_mantissa = (bits >> 22) & 1
    normal_code = ((bits + 0xC1000000 + 0x1FFFFF + odd_mantissa) >> 22) & 0xFF  # 0xC1000000 = (1-127)<<23
    code = tl.where(saturate, 7, tl.where(denormal, denormal_code, normal_code))
    return code | (sign >> 28)


@triton.jit
def _repeat_per_group(group_values, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, REPEATS: tl.constexpr):
    """[BLOCK_M, BLOCK_K // 32] -> [BLOCK_M, BLOCK_K // 32 * REPEATS], each value repeated REPEATS times."""
    repeated = tl.broadcast_to(group_values[:, :, None], (BLOCK_M, BLOCK_K // 32, REPEATS))
    return tl.reshape(repeated, (BLOCK_M, BLOCK_K // 32 * REPEATS))


@triton.jit
def mxfp4_quant_portable(x, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """Quantize a [BLOCK_M, BLOCK_K] float tile to MXFP4 along K, exactly like aiter's ``_mxfp4_quant_op``.

    Returns (packed uint8 [BLOCK_M, BLOCK_K // 2], scale bytes uint8 [BLOCK_M, BLOCK_K // 32]); element 2j
    in the low nibble of byte j. Requires BLOCK_K % 32 == 0; bf16, fp16 or fp32 input (computed in fp32).
    Where aiter's result hangs on unspecified NaN propagation (signalling NaNs, all-NaN groups) this
    follows aiter_semantics.md: NaN is ignored by the scale unless the whole group is NaN (byte 254).
    """
    x = _to_float32(x)
    s = _even_scale_exponent(x, BLOCK_M, BLOCK_K)
    # 2^-s built from bits; s = 127 needs the fp32 denormal 2^-127 (as aiter's exp2(-127)).
    multiplier_bits = tl.where(s == 127, 0x00400000, (127 - s) << 23)
    multiplier = _repeat_per_group(multiplier_bits, BLOCK_M, BLOCK_K, 32).to(tl.float32, bitcast=True)
    codes = _e2m1_codes_rne(x * multiplier)
    return _pack_nibbles(codes, BLOCK_M, BLOCK_K), _scale_byte(s)


@triton.jit
def mxfp4_quant_gfx950(x, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """``mxfp4_quant_portable`` with the element conversion done by ``v_cvt_scalef32_pk_fp4_bf16``.

    Same outputs, except on NaN elements (reference/emulation/gfx950_asm.py documents the assumptions).
    Requires a bf16 tile, BLOCK_K % 32 == 0, and gfx950 or the interpreter with the asm model installed.
    """
    tl.static_assert(x.dtype == tl.bfloat16, "mxfp4_quant_gfx950 converts bf16 pairs")
    s = _even_scale_exponent(_to_float32(x), BLOCK_M, BLOCK_K)
    # The instruction divides by its scale operand, so pass the dequantization scale 2^s (byte << 23; byte
    # 0 gives 0.0f, whose exponent field the instruction reads as 2^-127).
    scale_bits = _scale_byte(s).to(tl.uint32) << 23
    scale = _repeat_per_group(scale_bits, BLOCK_M, BLOCK_K, 16).to(tl.float32, bitcast=True)  # per bf16 pair
    even, odd = tl.split(tl.reshape(x.to(tl.uint16, bitcast=True).to(tl.uint32), (BLOCK_M, BLOCK_K // 2, 2)))
    converted = tl.inline_asm_elementwise("v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2", "=v,v,v",
                                          [even | (odd << 16), scale], dtype=tl.uint32, is_pure=True, pack=1)
    # Only the low byte is written; the rest of the register is whatever it held (possibly the scale).
    return (converted & 0xFF).to(tl.uint8), _scale_byte(s)


@triton.jit
def unshuffle_b_tile(w_tile, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Undo ``shuffle_weight(B_q, (16, 16))`` on a tile of its (N // 16, K * 8) uint8 view.

    ``w_tile`` is [BLOCK_N // 16, BLOCK_K // 2 * 16]: 16-row block i holds, for each 16 packed K bytes, a
    row-major 16x16 byte tile. Returns [BLOCK_K // 2, BLOCK_N] (K-packed bytes), the rhs of
    ``tl.dot_scaled``. Requires BLOCK_N % 16 == 0 and BLOCK_K % 32 == 0 (one 16x16 byte tile per 32 K
    values); shuffle_weight itself needs N % 16 == 0 and K % 64 == 0.
    """
    tiles = tl.reshape(w_tile, (BLOCK_N // 16, BLOCK_K // 32, 16, 16))  # [n // 16, kb // 16, n % 16, kb % 16]
    rows = tl.reshape(tl.permute(tiles, (0, 2, 1, 3)), (BLOCK_N, BLOCK_K // 2))
    return tl.trans(rows)


@triton.jit
def unshuffle_b_scales_tile(s_tile, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Undo ``e8m0_shuffle`` on a tile of its (rows_pad // 32, 32 * cols_pad) view.

    ``s_tile`` is [BLOCK_N // 32, BLOCK_K]: per 32 rows, each run of 8 scale columns (256 K values) is 256
    bytes ordered [c % 4][r % 16][(c % 8) // 4][(r % 32) // 16]. Returns [BLOCK_N, BLOCK_K // 32], the
    scale layout ``tl.dot_scaled`` takes. Requires BLOCK_N % 32 == 0 and BLOCK_K % 256 == 0 (>= 256).
    """
    # Axes: [r // 32, c // 8, c % 4, r % 16, (c % 8) // 4, (r % 32) // 16] ...
    chunks = tl.reshape(s_tile, (BLOCK_N // 32, BLOCK_K // 256, 4, 16, 2, 2))
    # ... to [r // 32, (r % 32) // 16, r % 16, c // 8, (c % 8) // 4, c % 4], i.e. row-major [r, c].
    ordered = tl.permute(chunks, (0, 5, 3, 1, 4, 2))
    return tl.reshape(ordered, (BLOCK_N, BLOCK_K // 32))


@triton.jit
def bf16_bits_rne(x):
    """fp32 -> bf16 bit patterns (uint16), round to nearest even, NaN -> 0x7FC0. Done with integer ops
    because the interpreter's ``.to(tl.bfloat16)`` truncates while compiled code rounds."""
    w = x.to(tl.uint32, bitcast=True)
    rounded = (w + 0x7FFF + ((w >> 16) & 1)) >> 16
    return tl.where((w & 0x7FFFFFFF) > 0x7F800000, 0x7FC0, rounded).to(tl.uint16)
