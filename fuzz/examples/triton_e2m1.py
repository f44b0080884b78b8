"""A helper module of the Triton example submissions (not a submission): fp32 -> e2m1 codes with
aiter's post-#975 rounding (round to nearest even, saturating at 6), written with integer bit operations
so that every backend computes the same codes."""
import triton
import triton.language as tl


@triton.jit
def e2m1_codes(qx):
    """fp32 values already divided by their group's scale -> e2m1 codes (uint8, sign in bit 3)."""
    bits = qx.to(tl.uint32, bitcast=True)
    sign = bits & 0x80000000
    bits = bits ^ sign
    f = bits.to(tl.float32, bitcast=True)
    saturate = f >= 6.0
    denormal = f < 1.0  # NaN: neither; its code comes from its bits, as in aiter's kernel
    subnormal_code = ((f + 4194304.0).to(tl.uint32, bitcast=True) - 0x4A800000).to(tl.uint8)
    odd = (bits >> 22) & 1
    normal_code = ((bits + 0xC1000000 + 0x1FFFFF + odd) >> 22).to(tl.uint8)
    code = tl.where(saturate, 7, tl.where(denormal, subnormal_code, normal_code)).to(tl.uint8)
    return code | (sign >> 28).to(tl.uint8)


@triton.jit
def pack_pairs(code, BM: tl.constexpr, BK: tl.constexpr):
    """[BM, BK] codes -> [BM, BK/2] bytes, element 2j in the low nibble of byte j."""
    low, high = tl.split(tl.reshape(code, (BM, BK // 2, 2)))
    return low | (high << 4)
