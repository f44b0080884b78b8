"""aiter's MXFP4 quantizer kernels (``aiter/ops/triton/_triton_kernels/quant/quant.py``
at f3be04a12a0c = bd02afb526).

Written from aiter's semantics (research/aiter_semantics.md sections 1.1-1.3) the way aiter writes them:
the same arguments and constexprs, ``.to(tl.float32)`` on the loaded tile, Python ``not`` on masks, the
scale through ``log2``/``floor``/``clamp``/``exp2``. The patched interpreter
(``reference.emulation.triton_interpreter``) computes what compiled Triton computes for all of that, so no
interpreter-safe rewrite is needed. Two spots where aiter's source leans on gfx950 (a negative float cast
to uint8, and exp2(-127) kept as a denormal) are written so that every backend computes gfx950's answer.

This module is independent of ``kernels/`` on purpose: our own kernels carry a second version of the same
math (``kernels/triton_blocks.py``), and each is tested against the oracle. A bug in one must not change
the other (a submission built on aiter is judged against this emulation, never against our kernels).

``_mxfp4_quant_op`` keeps aiter's name and argument order: the GEMM kernels call it as a global of their
module, and submissions patch it there.
"""
from reference.emulation import triton_interpreter

triton_interpreter.activate()  # before any @triton.jit: Triton picks interpreted or compiled at decoration

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _mxfp4_quant_op(x, BLOCK_SIZE_N, BLOCK_SIZE_M, MXFP4_QUANT_BLOCK_SIZE):
    """[BLOCK_SIZE_M, BLOCK_SIZE_N] tile (fp32, or bf16 from the GEMM kernels) -> (packed e2m1 uint8
    [BM, BN/2], element 2j in the low nibble of byte j; E8M0 bytes uint8 [BM, BN/32])."""
    F32_EXP_BIAS: tl.constexpr = 127
    F32_EXP_BITS: tl.constexpr = 8
    F32_MANT_BITS: tl.constexpr = 23
    E2M1_EXP_BIAS: tl.constexpr = 1
    E2M1_EXP_BITS: tl.constexpr = 2
    E2M1_MANT_BITS: tl.constexpr = 1
    E2M1_MAX: tl.constexpr = 6
    E2M1_MIN_NORMAL: tl.constexpr = 1
    GROUPS: tl.constexpr = BLOCK_SIZE_N // MXFP4_QUANT_BLOCK_SIZE

    x = x.reshape(BLOCK_SIZE_M, GROUPS, MXFP4_QUANT_BLOCK_SIZE)

    # Scale ("even" rule, section 1.2): round amax up at mantissa 1.75 by adding 2^21 to its bits and
    # keeping sign and exponent; then s = floor(log2) - 2 (2 = exponent of e2m1's largest value, 6).
    amax = tl.max(tl.abs(x), axis=-1, keep_dims=True)  # tl.max works in fp32; NaN wins only if all NaN
    amax_bits = amax.to(tl.int32, bitcast=True)
    amax_bits = (amax_bits + 0x200000).to(tl.uint32, bitcast=True) & 0xFF800000
    amax = amax_bits.to(tl.float32, bitcast=True)  # 0, a power of two, or +Inf
    scale_exponent = tl.clamp(tl.log2(amax).floor() - 2, min=-127, max=127)
    # aiter writes scale_exponent.to(tl.uint8): for a negative exponent that is poison in LLVM; gfx950 wraps
    # (s = -127: 129 + 127 = 256 -> byte 0; aiter's tests compare its bytes with torch's wrapping cast),
    # NVIDIA saturates to 0 (measured on the H200). Through int32 it wraps on every backend.
    scale_bytes = scale_exponent.to(tl.int32).to(tl.uint8) + F32_EXP_BIAS
    quant_scale = tl.exp2(-scale_exponent)
    # s = 127 (Inf, all-NaN or near-max groups) needs exp2(-127), the fp32 denormal 2^-127, as the oracle
    # assumes gfx950 gives it; NVIDIA's exp2 flushes it to 0 (measured on the H200), so it is set here.
    quant_scale = tl.where(scale_exponent == 127, 5.877471754111438e-39, quant_scale)
    qx = x * quant_scale

    # Elements (section 1.3): sign apart, |qx| >= 6 saturates to code 7; |qx| < 1 is rounded to a multiple
    # of 0.5 by one fp32 add; 1 <= |qx| < 6 is rounded to nearest even on the integer bits.
    bits = qx.to(tl.uint32, bitcast=True)
    sign = bits & 0x80000000
    bits = bits ^ sign
    magnitude = bits.to(tl.float32, bitcast=True)
    saturated = magnitude >= E2M1_MAX
    subnormal = (not saturated) & (magnitude < E2M1_MIN_NORMAL)
    normal = not (saturated | subnormal)  # NaN fails both comparisons and lands here, as in aiter

    # Adding 2^(e2m1's last subnormal exponent + f32 mantissa bits) = 2^22 leaves |qx| rounded (RNE) to a
    # multiple of 0.5 in the low mantissa bits: 0, 1 or 2 (= the code of 1.0).
    SUBNORMAL_ALIGN_EXP: tl.constexpr = (F32_EXP_BIAS - E2M1_EXP_BIAS) + (F32_MANT_BITS - E2M1_MANT_BITS) + 1
    SUBNORMAL_ALIGN_BITS: tl.constexpr = SUBNORMAL_ALIGN_EXP << F32_MANT_BITS
    SUBNORMAL_ALIGN: tl.constexpr = tl.cast(SUBNORMAL_ALIGN_BITS, tl.float32, bitcast=True)  # 2^22
    aligned = magnitude + SUBNORMAL_ALIGN
    subnormal_codes = (aligned.to(tl.uint32, bitcast=True) - SUBNORMAL_ALIGN_BITS).to(tl.uint8)

    # Rebias the exponent to e2m1's, add just under half an e2m1 ulp plus the kept bit (ties to even),
    # and keep exponent and top mantissa bit. The negative addend is a plain local, as in aiter: compiled,
    # it becomes an int32 tensor; as a constexpr, Triton refuses "an unsigned tensor and a negative scalar".
    SHIFT: tl.constexpr = F32_MANT_BITS - E2M1_MANT_BITS
    rebias_and_round = ((E2M1_EXP_BIAS - F32_EXP_BIAS) << F32_MANT_BITS) + (1 << (SHIFT - 1)) - 1
    kept_bit = (bits >> SHIFT) & 1
    normal_codes = ((bits + rebias_and_round + kept_bit) >> SHIFT).to(tl.uint8)

    codes = tl.full(bits.type.get_block_shapes(), 0x7, dtype=tl.uint8)
    codes = tl.where(normal, normal_codes, codes)
    codes = tl.where(subnormal, subnormal_codes, codes)
    SIGN_SHIFT: tl.constexpr = F32_MANT_BITS + F32_EXP_BITS - E2M1_MANT_BITS - E2M1_EXP_BITS  # bit 31 -> 3
    codes = codes | (sign >> SIGN_SHIFT).to(tl.uint8)

    pairs = tl.reshape(codes, [BLOCK_SIZE_M, GROUPS, MXFP4_QUANT_BLOCK_SIZE // 2, 2])
    low, high = tl.split(pairs)
    packed = (low | (high << 4)).reshape(BLOCK_SIZE_M, BLOCK_SIZE_N // 2)
    return packed, scale_bytes.reshape(BLOCK_SIZE_M, GROUPS)


@triton.heuristics({
    "EVEN_M_N": lambda args: args["M"] % args["BLOCK_SIZE_M"] == 0
    and args["N"] % (args["BLOCK_SIZE_N"] * args["NUM_ITER"]) == 0,
})
@triton.jit
def _dynamic_mxfp4_quant_kernel(
    x_ptr, x_fp4_ptr, bs_ptr,
    stride_x_m_in, stride_x_n_in, stride_x_fp4_m_in, stride_x_fp4_n_in, stride_bs_m_in, stride_bs_n_in,
    M, N,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, NUM_ITER: tl.constexpr, NUM_STAGES: tl.constexpr,
    MXFP4_QUANT_BLOCK_SIZE: tl.constexpr, EVEN_M_N: tl.constexpr, SCALING_MODE: tl.constexpr,
):
    """Program (i, j) quantizes rows [i*BM, (i+1)*BM) over NUM_ITER column blocks of BN, from block j*NUM_ITER."""
    pid_m = tl.program_id(0)
    first_block_n = tl.program_id(1) * NUM_ITER
    # int64 strides: M*N may pass 2^31.
    stride_x_m = tl.cast(stride_x_m_in, tl.int64)
    stride_x_n = tl.cast(stride_x_n_in, tl.int64)
    stride_x_fp4_m = tl.cast(stride_x_fp4_m_in, tl.int64)
    stride_x_fp4_n = tl.cast(stride_x_fp4_n_in, tl.int64)
    stride_bs_m = tl.cast(stride_bs_m_in, tl.int64)
    stride_bs_n = tl.cast(stride_bs_n_in, tl.int64)
    GROUPS: tl.constexpr = BLOCK_SIZE_N // MXFP4_QUANT_BLOCK_SIZE

    # aiter bounds the block index by N, an element count: harmless, kept.
    for block_n in tl.range(first_block_n, min(first_block_n + NUM_ITER, N), num_stages=NUM_STAGES):
        rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        cols = block_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        x_offs = rows[:, None] * stride_x_m + cols[None, :] * stride_x_n
        if EVEN_M_N:
            x = tl.load(x_ptr + x_offs, cache_modifier=".cg").to(tl.float32)
        else:
            # no `other`, as in aiter: Triton leaves masked lanes undefined (zeros in the interpreter)
            in_bounds = (rows < M)[:, None] & (cols < N)[None, :]
            x = tl.load(x_ptr + x_offs, mask=in_bounds, cache_modifier=".cg").to(tl.float32)

        packed, scale_bytes = _mxfp4_quant_op(x, BLOCK_SIZE_N, BLOCK_SIZE_M, MXFP4_QUANT_BLOCK_SIZE)

        byte_cols = block_n * BLOCK_SIZE_N // 2 + tl.arange(0, BLOCK_SIZE_N // 2)
        fp4_offs = rows[:, None] * stride_x_fp4_m + byte_cols[None, :] * stride_x_fp4_n
        scale_cols = block_n * GROUPS + tl.arange(0, GROUPS)
        bs_offs = rows[:, None] * stride_bs_m + scale_cols[None, :] * stride_bs_n
        if EVEN_M_N:
            tl.store(x_fp4_ptr + fp4_offs, packed)
            tl.store(bs_ptr + bs_offs, scale_bytes)
        else:
            tl.store(x_fp4_ptr + fp4_offs, packed, mask=(rows < M)[:, None] & (byte_cols < N // 2)[None, :])
            scale_count = (N + MXFP4_QUANT_BLOCK_SIZE - 1) // MXFP4_QUANT_BLOCK_SIZE
            tl.store(bs_ptr + bs_offs, scale_bytes, mask=(rows < M)[:, None] & (scale_cols < scale_count)[None, :])
