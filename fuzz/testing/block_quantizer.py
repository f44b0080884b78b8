"""Our shared Triton quantizer block (kernels/triton_blocks.py) launched on one tile, for the tests that
compare it with the reference (fuzz/unit/test_triton_blocks.py) and the layering test's mutant check."""
import pytest
import torch

import kernels  # noqa: F401  (switches Triton to the interpreter on this machine before @triton.jit)
import triton
import triton.language as tl
from kernels.platform import detect
from kernels.triton_blocks import mxfp4_quant_gfx950, mxfp4_quant_portable
from reference.emulation import gfx950_asm

DEVICE = detect().device


@triton.jit
def _quantize_tile(x_ptr, packed_ptr, scales_ptr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                   GFX950: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    x = tl.load(x_ptr + rows * BLOCK_K + tl.arange(0, BLOCK_K)[None, :])
    if GFX950:
        packed, scales = mxfp4_quant_gfx950(x, BLOCK_M, BLOCK_K)
    else:
        packed, scales = mxfp4_quant_portable(x, BLOCK_M, BLOCK_K)
    tl.store(packed_ptr + rows * (BLOCK_K // 2) + tl.arange(0, BLOCK_K // 2)[None, :], packed)
    tl.store(scales_ptr + rows * (BLOCK_K // 32) + tl.arange(0, BLOCK_K // 32)[None, :], scales)


def quantize_with_block(x: torch.Tensor, gfx950: bool):
    m, k = x.shape
    packed = torch.empty((m, k // 2), dtype=torch.uint8, device=DEVICE)
    scales = torch.empty((m, k // 32), dtype=torch.uint8, device=DEVICE)
    if gfx950:
        if not (detect().interpreter or detect().is_gfx950):
            pytest.skip(f"the gfx950 inline asm runs on gfx950 or on the interpreter's model, not on {detect().arch}")
        if detect().interpreter:
            assert gfx950_asm.install()
    _quantize_tile[(1,)](x.contiguous().to(DEVICE), packed, scales, m, k, gfx950)
    return packed.cpu(), scales.cpu()
