"""aiter.dtypes (``aiter/utility/dtypes.py``): torch dtypes under aiter's names, as on gfx950."""
import torch

_8bit_fallback = torch.uint8

# Torch builds without the sub-byte float dtypes get uint8, as in aiter.
fp4x2 = getattr(torch, "float4_e2m1fn_x2", _8bit_fallback)
fp8_e8m0 = getattr(torch, "float8_e8m0fnu", _8bit_fallback)
i4x2 = getattr(torch, "int4", _8bit_fallback)
fp8 = torch.float8_e4m3fn  # gfx950's fp8 (gfx942 would be float8_e4m3fnuz)
fp16 = torch.float16
bf16 = torch.bfloat16
fp32 = torch.float32
u32 = torch.uint32
i32 = torch.int32
i16 = torch.int16
i8 = torch.int8

d_dtypes = {
    "fp8": fp8,
    "fp8_e8m0": fp8_e8m0,
    "fp16": fp16,
    "bf16": bf16,
    "fp32": fp32,
    "i4x2": i4x2,
    "fp4x2": fp4x2,
    "u32": u32,
    "i32": i32,
    "i16": i16,
    "i8": i8,
}


def get_dtype_fp8():
    return fp8
