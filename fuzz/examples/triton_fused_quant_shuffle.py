#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: A quantized by its own Triton kernel that writes the scales straight
into e8m0_shuffle's layout (aiter's fused quant + shuffle idiom), then aiter's gemm_a4w4.

One program per (32-row block, 32-element group): the group index is the program id, a rank-0 value
that the kernel indexes as ``group[None, :]`` and compares into the store mask, as aiter's kernel does.
The runner's Triton accepts that (shape [1]); Triton 3.9 rejects the index and its interpreter made the
mask an int32 block ("mask has unsupported dtype"). Neither may fail this file.
"""
import torch
import triton
import triton.language as tl
import aiter
from aiter import dtypes
from task import input_t, output_t
from triton_e2m1 import e2m1_codes, pack_pairs

BLOCK_M = 32


@triton.jit
def shuffled_offset(rows, groups, cols_padded, SWAP: tl.constexpr):
    """Byte offset of scale (row, group) in e8m0_shuffle's layout: [r/32, g/8, g%4, r%16, (g%8)/4, (r%32)/16]."""
    if SWAP:  # the wrong twin's layout: the two halves of a 32-row block exchanged with the two 4-groups
        return (rows // 32) * (cols_padded * 32) + (groups // 8) * 256 + (groups % 4) * 64 + (rows % 16) * 4 \
            + ((rows % 32) // 16) * 2 + (groups % 8) // 4
    return (rows // 32) * (cols_padded * 32) + (groups // 8) * 256 + (groups % 4) * 64 + (rows % 16) * 4 \
        + ((groups % 8) // 4) * 2 + (rows % 32) // 16


@triton.jit
def _quantize_shuffled(a_ptr, q_ptr, s_ptr, M, n_groups, cols_padded, stride_am, stride_qm,
                       BM: tl.constexpr, SWAP: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    group = tl.program_id(1)  # rank 0
    ks = group * 32 + tl.arange(0, 32)
    a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :], mask=(rows < M)[:, None], other=0.0)
    values = a.to(tl.float32)
    amax = tl.max(tl.abs(values), axis=1)
    rounded = ((amax.to(tl.uint32, bitcast=True) + 0x200000) & 0xFF800000).to(tl.float32, bitcast=True)
    exponent = tl.minimum(tl.maximum(tl.floor(tl.log2(rounded)).to(tl.int32) - 2, -127), 127)
    inverse = 127 - exponent
    quant_scale = tl.where(inverse > 0, inverse << 23, 0x400000).to(tl.float32, bitcast=True)
    packed = pack_pairs(e2m1_codes(values * quant_scale[:, None]), BM, 32)
    half = group * 16 + tl.arange(0, 16)
    tl.store(q_ptr + rows[:, None] * stride_qm + half[None, :], packed, mask=(rows < M)[:, None])
    offsets = shuffled_offset(rows[:, None], group[None, :], cols_padded, SWAP)
    mask = (rows < M)[:, None] & (group < n_groups)[None, :]
    tl.store(s_ptr + offsets, (exponent + 127).to(tl.uint8)[:, None], mask=mask)


def gemm(A: torch.Tensor, B_shuffle: torch.Tensor, B_scale_sh: torch.Tensor, swap: bool = False):
    m, k = A.shape
    groups = k // 32
    cols_padded = (groups + 7) // 8 * 8
    q = torch.empty((m, k // 2), dtype=torch.uint8, device=A.device)
    s = torch.zeros(((m + 255) // 256 * 256, cols_padded), dtype=torch.uint8, device=A.device)
    _quantize_shuffled[(triton.cdiv(m, BLOCK_M), groups)](A, q, s, m, groups, cols_padded, A.stride(0), q.stride(0),
                                                          BLOCK_M, swap)
    return aiter.gemm_a4w4(q.view(dtypes.fp4x2), B_shuffle, s.view(dtypes.fp8_e8m0), B_scale_sh,
                           dtype=dtypes.bf16, bpreshuffle=True)


def custom_kernel(data: input_t) -> output_t:
    A, _, _, B_shuffle, B_scale_sh = data
    return gemm(A.contiguous(), B_shuffle, B_scale_sh)
