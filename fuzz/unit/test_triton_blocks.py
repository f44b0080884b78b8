"""The shared @triton.jit blocks (kernels/triton_blocks.py) on this tier (the interpreter on a CPU, compiled
on a GPU), against the reference."""
import numpy as np
import pytest
import torch

import kernels  # noqa: F401  (switches Triton to the interpreter on this machine before @triton.jit)
import triton
import triton.language as tl
from kernels.triton_blocks import (
    unshuffle_b_scales_tile,
    unshuffle_b_tile,
)
from kernels.platform import detect

DEVICE = detect().device
from fuzz.testing.block_quantizer import quantize_with_block  # noqa: E402

# NaN/Inf inputs make numpy (behind the interpreter) warn; they are the point of these tests.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def bf16_from_bits(bits) -> torch.Tensor:
    return torch.as_tensor(np.asarray(bits, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)


def bf16(values) -> np.ndarray:
    """bf16 bit patterns of exactly representable values."""
    return torch.tensor(values, dtype=torch.float32).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def all_bf16_in_order() -> torch.Tensor:
    """Every bf16 pattern once; each group of 32 holds neighbouring patterns (one binade, or the NaNs)."""
    return bf16_from_bits(np.arange(65536)).reshape(512, 128)


def all_bf16_shuffled() -> torch.Tensor:
    """Every bf16 pattern once, in random groups (mixed magnitudes, stray NaN/Inf)."""
    return bf16_from_bits(np.random.default_rng(0).permutation(65536)).reshape(512, 128)


def ties_and_specials() -> torch.Tensor:
    """Groups of 32: exact e2m1 ties and their neighbours at several scales, then special groups; each row
    holds two different groups."""
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    rows = []
    for s in (0, -3, 5, -120, 120, -125):  # -125: the small ties are bf16 subnormals
        # amax 4 * 2^s fixes the scale exponent at s; every tie is exact in bf16.
        group = [4.0, 6.0, 0.0, -0.0] + ties + [-t for t in ties]
        values = np.array(group, dtype=np.float64) * 2.0**s
        bits = bf16(values)
        above = bits[4:11] + 1  # one bf16 ulp away from each tie, away from zero
        below = bits[4:11] - 1
        rows.append(np.concatenate([bits, above, below]))
    quiet_nan, inf, max_finite = 0x7FC0, 0x7F80, 0x7F7F
    special_groups = [
        np.zeros(32),                                               # all +0: byte 0
        np.full(32, 0x8000),                                        # all -0: codes 0x8
        np.full(32, quiet_nan),                                     # all NaN: byte 254
        np.full(32, quiet_nan | 0x8000),
        np.resize([0x7F81, 0xFFFF, 0x7FA0, 0xFFC1], 32),            # NaN payloads
        np.resize([inf, 0x3F80, 0x7F00, 0x0001, 0xC2C0], 32),       # +Inf beside finite values
        np.resize([inf | 0x8000, 0x4040, 0xBF80], 32),              # -Inf
        np.arange(1, 33),                                           # bf16 subnormals only
        np.resize([0x0080, 0x007F, 0x8001, 0x0040], 32),            # smallest normal and subnormals
        np.resize([max_finite, 0x7F60, 0x3F80, 0xFF7F], 32),        # near bf16 max: rounds to Inf
        np.resize([0x7F5F, 0x7F00, 0x3F80], 32),                    # just below that
        np.resize([quiet_nan, 0x4000, 0x3E80, 0xC0A0], 32),         # one NaN: ignored by the scale
        np.array([0x4100] + [0x3F80] * 30 + [0x7F95]),              # sNaN after the amax (IEEE-2008 maxNum loses it)
    ]
    rows += [np.asarray(g) for g in special_groups]
    rows += [np.zeros(32)] * (32 - len(rows))  # BLOCK_M must be a power of two
    groups = np.stack(rows).astype(np.int64) & 0xFFFF
    return bf16_from_bits(np.concatenate([groups, np.roll(groups, 7, axis=0)], axis=1))


INPUTS = {"all_bf16_in_order": all_bf16_in_order, "all_bf16_shuffled": all_bf16_shuffled,
          "ties_and_specials": ties_and_specials}


@pytest.mark.parametrize("make_input", INPUTS.values(), ids=INPUTS.keys())
def test_portable_quant_block_matches_reference(make_input):
    quant = pytest.importorskip("reference.oracle.quant")
    from fuzz.judge.verdicts import nan_results

    x = make_input()
    packed, scales = quantize_with_block(x, gfx950=False)
    # NaN elements: what this tier's fp32 multiply makes of them (payload on a CPU, canonical on NVIDIA)
    expected_packed, expected_scales = quant.quantize_mxfp4(x, nan=nan_results()[0])
    assert torch.equal(scales, expected_scales)
    assert torch.equal(packed, expected_packed)


def nan_nibbles(x: torch.Tensor) -> torch.Tensor:
    """[M, K] bf16 -> [M, K/2] uint8 with 0xF over each NaN element's nibble."""
    nan = torch.isnan(x.float()).to(torch.uint8) * 0xF
    return nan[:, 0::2] | (nan[:, 1::2] << 4)


def signed_max_nibbles(x: torch.Tensor) -> torch.Tensor:
    """[M, K] bf16 -> [M, K/2] uint8 with each element's code 0x7 plus its sign bit."""
    codes = 0x7 | ((x.view(torch.int16) < 0).to(torch.uint8) << 3)
    return codes[:, 0::2] | (codes[:, 1::2] << 4)


@pytest.mark.parametrize("make_input", INPUTS.values(), ids=INPUTS.keys())
def test_gfx950_quant_block_matches_portable_except_nan_elements(make_input):
    x = make_input()
    portable_packed, portable_scales = quantize_with_block(x, gfx950=False)
    packed, scales = quantize_with_block(x, gfx950=True)
    assert torch.equal(scales, portable_scales)
    nan = nan_nibbles(x)
    assert torch.equal(packed & ~nan, portable_packed & ~nan)
    # Assumed hardware behaviour (gfx950_asm docstring): NaN becomes +-6, where aiter's bit trick
    # gives a payload-dependent code.
    assert torch.equal(packed & nan, signed_max_nibbles(x) & nan)


def test_gfx950_and_portable_disagree_on_quiet_nan():
    x = bf16_from_bits(np.resize([0x7FC0, 0xFFC0, 0x3F80, 0x4000], 64)).reshape(1, 64)
    packed, _ = quantize_with_block(x, gfx950=True)
    portable_packed, _ = quantize_with_block(x, gfx950=False)
    # Byte 0 holds (NaN, -NaN): aiter's normal branch gives 0x3/0xB, the instruction model 0x7/0xF.
    assert portable_packed[0, 0].item() == 0xB3
    assert packed[0, 0].item() == 0xF7


# Shuffles written from the index formulas of aiter_semantics.md sections 3 and 2.2.
def shuffle_weight_by_formula(b_q: torch.Tensor) -> torch.Tensor:
    n, kb = b_q.shape
    rows, cols = torch.meshgrid(torch.arange(n), torch.arange(kb), indexing="ij")
    flat = (rows // 16) * 16 * kb + (cols // 16) * 256 + (rows % 16) * 16 + cols % 16
    out = torch.empty(n * kb, dtype=torch.uint8)
    out[flat.flatten()] = b_q.flatten()
    return out.view(n, kb)


def e8m0_shuffle_by_formula(scales: torch.Tensor) -> torch.Tensor:
    rows_count, cols_count = scales.shape
    sm, sn = -(-rows_count // 256) * 256, -(-cols_count // 8) * 8
    padded = torch.full((sm, sn), 0x55, dtype=torch.uint8)
    padded[:rows_count, :cols_count] = scales
    r, c = torch.meshgrid(torch.arange(sm), torch.arange(sn), indexing="ij")
    flat = (r // 32) * 32 * sn + (c // 8) * 256 + (c % 4) * 64 + (r % 16) * 4 + ((c % 8) // 4) * 2 + (r % 32) // 16
    out = torch.empty(sm * sn, dtype=torch.uint8)
    out[flat.flatten()] = padded.flatten()
    return out.view(sm, sn)


@triton.jit
def _unshuffle_tiles(w_ptr, w_row_stride, s_ptr, s_row_stride, b_t_ptr, b_scales_ptr, N, K,
                     BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    w_rows = pid_n * (BLOCK_N // 16) + tl.arange(0, BLOCK_N // 16)
    w_cols = pid_k * (BLOCK_K // 2) * 16 + tl.arange(0, BLOCK_K // 2 * 16)
    w_tile = tl.load(w_ptr + w_rows[:, None] * w_row_stride + w_cols[None, :])
    s_rows = pid_n * (BLOCK_N // 32) + tl.arange(0, BLOCK_N // 32)
    s_cols = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    s_tile = tl.load(s_ptr + s_rows[:, None] * s_row_stride + s_cols[None, :])

    b_t = unshuffle_b_tile(w_tile, BLOCK_N, BLOCK_K)  # [BLOCK_K // 2, BLOCK_N]
    k_bytes = pid_k * (BLOCK_K // 2) + tl.arange(0, BLOCK_K // 2)
    n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(b_t_ptr + k_bytes[:, None] * N + n[None, :], b_t)
    b_scales = unshuffle_b_scales_tile(s_tile, BLOCK_N, BLOCK_K)  # [BLOCK_N, BLOCK_K // 32]
    k_groups = pid_k * (BLOCK_K // 32) + tl.arange(0, BLOCK_K // 32)
    tl.store(b_scales_ptr + n[:, None] * (K // 32) + k_groups[None, :], b_scales)


@pytest.mark.parametrize("n,k,block_n,block_k", [(64, 512, 32, 256), (96, 1024, 32, 512), (64, 512, 64, 512)])
def test_unshuffle_blocks_invert_the_preshuffled_layouts(n, k, block_n, block_k):
    generator = torch.Generator().manual_seed(n + k)
    b_q = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, generator=generator)
    b_scales = torch.randint(0, 256, (n, k // 32), dtype=torch.uint8, generator=generator)
    w = shuffle_weight_by_formula(b_q).view(n // 16, k * 8)
    shuffled_scales = e8m0_shuffle_by_formula(b_scales)
    s = shuffled_scales.view(shuffled_scales.shape[0] // 32, -1)
    b_t = torch.empty((k // 2, n), dtype=torch.uint8, device=DEVICE)
    unshuffled_scales = torch.empty((n, k // 32), dtype=torch.uint8, device=DEVICE)
    _unshuffle_tiles[(n // block_n, k // block_k)](w.to(DEVICE), w.stride(0), s.to(DEVICE), s.stride(0), b_t,
                                                    unshuffled_scales, n, k, block_n, block_k)
    assert torch.equal(b_t.cpu(), b_q.T)
    assert torch.equal(unshuffled_scales.cpu(), b_scales)
