"""aiter.utility.fp4_utils as of the competition (aiter_semantics.md section 2).

Its ``dynamic_mxfp4_quant`` is the one ``aiter.get_triton_quant(QuantType.per_1x32)`` calls. Until
2026-03-17 (after the competition snapshot) it still rounded e2m1 ties *up* (the pre-#975 element code,
section 1.4), returned the whole padded scale buffer, and its ``shuffle=True`` layout used the unpadded
scale width as the 32-row-group stride. All three are modelled.
"""
import torch
import torch.nn.functional as F

from reference.oracle.e2m1 import decode_e2m1, encode_e2m1, pack_e2m1, unpack_e2m1
from reference.oracle.quant import quantize_mxfp4

from .. import _emulation
from . import dtypes

MXFP4_QUANT_BLOCK_SIZE = 32


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def f32_to_mxfp4(x: torch.Tensor) -> torch.Tensor:
    """Already-scaled values -> packed e2m1 (torchao's RNE conversion; NaN -> 0x3), viewed as fp4x2."""
    return pack_e2m1(encode_e2m1(x.float(), "rne")).view(dtypes.fp4x2)


def mxfp4_to_f32(x: torch.Tensor) -> torch.Tensor:
    """Packed e2m1 bytes [..., K/2] -> fp32 [..., K]; the low nibble is the even element; code 8 is -0.0."""
    return decode_e2m1(unpack_e2m1(x.view(torch.uint8)))


def f32_to_e8m0(x: torch.Tensor) -> torch.Tensor:
    """fp32 -> E8M0 byte: its exponent, plus one when the mantissa is >= 0.5 (bit 22 and anything below,
    or any exponent); NaN/Inf -> 0xFF."""
    bits = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    exponent = (bits >> 23) & 0xFF
    rounds_up = ((bits & 0x400000) != 0) & (((bits & 0x3FFFFF) != 0) | (exponent > 0))
    byte = (exponent + rounds_up.to(torch.int64)) & 0xFF
    byte = torch.where(exponent == 0xFF, torch.full_like(byte, 0xFF), byte)
    return byte.to(torch.uint8).view(dtypes.fp8_e8m0)


def e8m0_to_f32(scale_e8m0_biased: torch.Tensor) -> torch.Tensor:
    """E8M0 bytes -> fp32 2^(b-127); byte 0 -> the denormal 2^-127, byte 0xFF -> NaN (bits 0x7F800001)."""
    b = scale_e8m0_biased.view(torch.uint8).to(torch.int32)
    bits = torch.where(b == 0, torch.full_like(b, 0x00400000), b << 23)
    bits = torch.where(b == 0xFF, torch.full_like(b, 0x7F800001), bits)
    return bits.view(torch.float32)


def e8m0_shuffle(scale):
    """[R, C] -> [ceil256(R), ceil8(C)] in the order the ASM GEMM and the preshuffle kernels read, same dtype.

    Every 32 rows x 8 columns become one contiguous 256-byte tile ordered [c%4][r%16][(c%8)//4][(r%32)//16].
    The padding is uninitialised in aiter; here it holds ``_emulation.UNINITIALIZED_BYTE``.
    """
    if scale is None or scale.dtype == torch.float32:
        return scale
    assert scale.ndim == 2, "scale must be a 2D tensor"
    rows, cols = scale.shape
    padded = _emulation.uninitialized((_cdiv(rows, 256) * 256, _cdiv(cols, 8) * 8), scale.dtype, scale.device)
    padded[:rows, :cols] = scale
    padded_rows, padded_cols = padded.shape
    tiles = padded.view(padded_rows // 32, 2, 16, padded_cols // 8, 2, 4)
    return tiles.permute(0, 3, 5, 2, 4, 1).contiguous().view(padded_rows, padded_cols)


def _shuffled_scale_offset(rows: torch.Tensor, cols: torch.Tensor, group_stride: int) -> torch.Tensor:
    """Byte offset of scale (row, col) in the e8m0_shuffle layout whose 32-row groups are ``32 * group_stride`` apart."""
    return ((rows % 32) // 16 + ((cols % 8) // 4) * 2 + (rows % 16) * 4 + (cols % 4) * 64 + (cols // 8) * 256
            + (rows // 32) * 32 * group_stride)


def dynamic_mxfp4_quant(x: torch.Tensor, scaling_mode: str = "even", shuffle: bool = False):
    """(codes fp4x2 [M, N/2], scales fp8_e8m0 [ceil256(M), ceil8(cdiv(N, 32))]): even scale rule, ties-up
    elements. ``scaling_mode`` is ignored, as in aiter.

    shuffle=False: scales row-major; rows >= M uninitialised.
    shuffle=True: scales in the e8m0_shuffle order but with 32-row groups ``cdiv(N, 32)`` bytes x 32 apart
    (aiter's pre-#2900 stride: right only when N % 256 == 0); rows in [M, ceil32(M)) and columns past
    cdiv(N, 32) hold 127; rows from ceil32(M) on are uninitialised.
    """
    M, N = x.shape
    assert (N // 2) % 2 == 0
    scale_cols = _cdiv(N, MXFP4_QUANT_BLOCK_SIZE)
    scale_cols_pad = _cdiv(scale_cols, 8) * 8
    # The kernel loads with a mask and no `other`: lanes past N read as zero in practice, so padding with
    # zeros up to the grid's last scale column gives the bytes it writes there (0 for an all-zero group).
    x32 = F.pad(x.to(torch.float32), (0, scale_cols_pad * MXFP4_QUANT_BLOCK_SIZE - N))
    codes, scales = quantize_mxfp4(x32, rounding="ties_up")
    x_fp4 = codes[:, : N // 2].contiguous()

    blockscale = _emulation.uninitialized((_cdiv(M, 256) * 256, scale_cols_pad), torch.uint8, x.device)
    if not shuffle:
        written_cols = min(scale_cols_pad, N)  # the store mask compares the column with N, the element count
        blockscale[:M, :written_cols] = scales[:, :written_cols]
    else:
        rows = torch.arange(_cdiv(M, 32) * 32, device=x.device)[:, None]
        cols = torch.arange(scale_cols_pad, device=x.device)[None, :]
        values = torch.full((rows.shape[0], scale_cols_pad), 127, dtype=torch.uint8, device=x.device)
        values[:M, :scale_cols] = scales[:, :scale_cols]
        offsets = _shuffled_scale_offset(rows, cols, scale_cols).flatten()
        _store_last_writer_wins(blockscale.view(-1), offsets, values.flatten())
    return x_fp4.view(dtypes.fp4x2), blockscale.view(dtypes.fp8_e8m0)


def _store_last_writer_wins(flat: torch.Tensor, offsets: torch.Tensor, values: torch.Tensor) -> None:
    """flat[offsets] = values where, for repeated offsets, the last value (in row-major writer order) wins.

    With the pre-#2900 stride (N % 256 != 0) 32-row groups overlap; which GPU program's store lands last is
    not determined, so the order here is an assumption (docs/aiter_emulation.md).
    """
    writer = torch.arange(offsets.numel(), device=offsets.device)
    winner = torch.full((flat.numel(),), -1, dtype=torch.int64, device=offsets.device)
    winner.scatter_reduce_(0, offsets, writer, reduce="amax")
    written = winner >= 0
    flat[written] = values[winner[written]]
