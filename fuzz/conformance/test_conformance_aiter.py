"""Conformance: the aiter emulation and the gfx950 instruction model against the real things.

Runs only on a gfx950 GPU with the real aiter selected (``--aiter real`` or ``auto``); everywhere else each
test skips and says what is missing. The emulation is imported beside the real package as
``aiter_emulated``. A failure here means an emulated function, or a documented assumption of the models
(docs/aiter_emulation.md, reference/emulation/gfx950_asm.py), is wrong on hardware.
"""
import importlib

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from fuzz.testing.fixtures_aiter import assert_within_bound, emulated
from kernels.platform import detect
from reference import e8m0_unshuffle, exact_gemm, exact_gemm_from_inputs, generate_input, unshuffle_weight
from reference.emulation import gfx950_asm

pytestmark = [pytest.mark.conformance, pytest.mark.gpu]


@pytest.fixture(scope="module")
def real(aiter_info):
    """The real aiter package, or a skip naming what this machine lacks."""
    platform = detect()
    if not platform.is_gfx950:
        pytest.skip(f"needs a gfx950 GPU (MI355X); this is the {platform.describe()}")
    if aiter_info.kind != "real":
        pytest.skip(f"needs the real aiter (run with --aiter real or auto where it is installed); got {aiter_info.describe()}")
    return importlib.import_module("aiter")


def module_pair(real, path):
    return importlib.import_module(f"aiter.{path}"), emulated(path)


def every_bf16_pattern(device) -> torch.Tensor:
    bits = np.random.default_rng(0).permutation(65536).astype(np.uint16).view(np.int16)
    return torch.from_numpy(bits).view(torch.bfloat16).reshape(512, 128).to(device)


def randn(m, n, seed, device):
    return torch.randn((m, n), generator=torch.Generator().manual_seed(seed)).mul(3).to(torch.bfloat16).to(device)


def written(emulated_bytes: torch.Tensor) -> torch.Tensor:
    """Where the emulation wrote a value: it marks memory aiter leaves uninitialised with a byte no writer uses."""
    return emulated_bytes.view(torch.uint8) != emulated("_emulation").UNINITIALIZED_BYTE


def test_triton_dynamic_mxfp4_quant(real):
    real_q, emu_q = module_pair(real, "ops.triton.quant")
    inputs = [every_bf16_pattern("cuda")] + [randn(m, n, m + n, "cuda") for m, n in
                                             [(1, 64), (3, 68), (33, 256), (40, 2048), (256, 7168), (2, 4)]]
    for x in inputs:
        (rc, rs), (ec, es) = real_q.dynamic_mxfp4_quant(x), emu_q.dynamic_mxfp4_quant(x)
        assert torch.equal(rc, ec) and torch.equal(rs, es), f"shape {tuple(x.shape)}"
        assert rs.stride() == es.stride() and rc.stride() == ec.stride()


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("m, n", [(5, 512), (40, 1536), (70, 320)])
def test_fp4_utils_quant(real, m, n, shuffle):
    real_u, emu_u = module_pair(real, "utility.fp4_utils")
    x = randn(m, n, m * n, "cuda")
    (rc, rs), (ec, es) = real_u.dynamic_mxfp4_quant(x, shuffle=shuffle), emu_u.dynamic_mxfp4_quant(x, shuffle=shuffle)
    assert torch.equal(rc.view(torch.uint8), ec.view(torch.uint8))
    assert rs.shape == es.shape and rs.dtype == es.dtype
    mask = written(es)
    assert torch.equal(rs.view(torch.uint8)[mask], es.view(torch.uint8)[mask])


def test_layouts_and_converters(real):
    real_u, emu_u = module_pair(real, "utility.fp4_utils")
    real_s, emu_s = module_pair(real, "ops.shuffle")
    scales = torch.randint(0, 255, (300, 13), dtype=torch.uint8, device="cuda")
    es = emu_u.e8m0_shuffle(scales)
    assert torch.equal(real_u.e8m0_shuffle(scales)[written(es)], es[written(es)])
    weight = torch.randint(0, 256, (96, 128), dtype=torch.uint8, device="cuda")
    assert torch.equal(real_s.shuffle_weight(weight, layout=(16, 16)), emu_s.shuffle_weight(weight, layout=(16, 16)))
    every_byte = torch.arange(256, dtype=torch.uint8, device="cuda")[None, :]
    assert torch.equal(real_u.mxfp4_to_f32(every_byte).view(torch.int32), emu_u.mxfp4_to_f32(every_byte).view(torch.int32))
    assert torch.equal(real_u.e8m0_to_f32(every_byte).view(torch.int32), emu_u.e8m0_to_f32(every_byte).view(torch.int32))


def test_get_splitk(real):
    real_w, emu_w = module_pair(real, "ops.triton.gemm.basic.gemm_afp4wfp4")
    for k_bytes in range(32, 8192 + 1, 32):
        for block_k in (128, 256, 512, 1024):
            for ksplit in range(1, 17):
                assert real_w.get_splitk(k_bytes, block_k, ksplit) == emu_w.get_splitk(k_bytes, block_k, ksplit)


def quantized_a(aiter_module, data):
    codes, scales = importlib.import_module(f"{aiter_module.__name__}.ops.triton.quant").dynamic_mxfp4_quant(data[0])
    fp4_utils = importlib.import_module(f"{aiter_module.__name__}.utility.fp4_utils")
    return codes.view(aiter_module.dtypes.fp4x2), fp4_utils.e8m0_shuffle(scales).view(aiter_module.dtypes.fp8_e8m0)


@pytest.mark.parametrize("m, n, k", [(8, 2112, 7168), (16, 3072, 1536), (256, 2880, 512), (4, 2880, 512), (1, 64, 256)])
def test_gemm_a4w4_both_meet_the_bound(real, m, n, k):
    data = generate_input(m, n, k, seed=m + n + k, device="cuda")
    exact = exact_gemm_from_inputs(data)
    for package in (real, emulated()):
        a_q, a_scale = quantized_a(package, data)
        out = package.gemm_a4w4(a_q, data[3], a_scale, data[4], dtype=torch.bfloat16, bpreshuffle=True)
        assert_within_bound(out, exact, "rne")


def test_gemm_a4w4_reads_a_wrong_view_the_same_way(real):
    # B_q (not shuffled) passed as the preshuffled B: both must compute the product of what the shuffle
    # map reads from those bytes, i.e. of unshuffle_weight(B_q).
    m, n, k = 16, 256, 1024
    data = generate_input(m, n, k, seed=1, device="cuda")
    A, _, b_q, _, b_scale_sh = data
    read_as = exact_gemm(A, unshuffle_weight(b_q), e8m0_unshuffle(b_scale_sh, n, k // 32))
    for package in (real, emulated()):
        a_q, a_scale = quantized_a(package, data)
        assert_within_bound(package.gemm_a4w4(a_q, b_q, a_scale, b_scale_sh), read_as, "rne")


@pytest.mark.parametrize("log2_k_split", [1, 2, 3])
def test_asm_split_k_keeps_fp32_partials(real, log2_k_split):
    """The emulation assumes split-K partials stay fp32 (the zeroed out is not visibly a bf16 accumulator)."""
    m, n, k = 32, 512, 7168
    data = generate_input(m, n, k, seed=2, device="cuda")
    a_q, a_scale = quantized_a(real, data)
    out = torch.empty((32, n), dtype=torch.bfloat16, device="cuda")
    name = "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E"
    real.gemm_a4w4_asm(a_q, data[3], a_scale, data[4], out, name, log2_k_split=log2_k_split)
    k_per_split = -(-(k >> log2_k_split) // 256) * 256
    assert_within_bound(out[:m], exact_gemm_from_inputs(data), "rne", splits=-(-k // k_per_split))


def preshuffle_operands(data):
    _, _, _, b_shuffle, b_scale_sh = data
    n, half_k = b_shuffle.shape
    return (b_shuffle.view(torch.uint8).reshape(n // 16, half_k * 16),
            b_scale_sh.view(torch.uint8).reshape(b_scale_sh.shape[0] // 32, -1))


@pytest.mark.parametrize("m, n, k", [(16, 2112, 7168), (4, 2880, 512), (64, 512, 1024)])
def test_a16wfp4_preshuffle_both_meet_the_bound(real, m, n, k):
    data = generate_input(m, n, k, seed=3, device="cuda")
    exact = exact_gemm_from_inputs(data)
    for path in ("aiter", "emulated"):
        gemm = (importlib.import_module("aiter.ops.triton.gemm.basic.gemm_a16wfp4") if path == "aiter"
                else emulated("ops.triton.gemm.basic.gemm_a16wfp4"))
        assert_within_bound(gemm.gemm_a16wfp4_preshuffle(data[0], *preshuffle_operands(data)), exact, "rne")


def test_reduce_kernel_is_bit_identical(real):
    real_k, emu_k = module_pair(real, "ops.triton._triton_kernels.gemm.basic.gemm_afp4wfp4")
    m, n, splits = 37, 200, 7
    partials = torch.randn((8, m, n), device="cuda")
    outs = []
    for module in (real_k, emu_k):
        y = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        module._gemm_afp4wfp4_reduce_kernel[(triton.cdiv(m, 16), triton.cdiv(n, 64))](
            partials, y, m, n, *partials.stride(), *y.stride(), 16, 64, splits, 8)
        outs.append(y)
    assert torch.equal(*outs)


@triton.jit
def _cvt_bf16_pairs(src_ptr, scale_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    packed = tl.inline_asm_elementwise("v_cvt_scalef32_pk_fp4_bf16 $0, $1, $2", "=v,v,v",
                                       [tl.load(src_ptr + offs), tl.load(scale_ptr + offs)],
                                       dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, packed & 0xFF)


@triton.jit
def _cvt_f32_pairs(src0_ptr, src1_ptr, scale_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    packed = tl.inline_asm_elementwise("v_cvt_scalef32_pk_fp4_f32 $0, $1, $2, $3", "=v,v,v,v",
                                       [tl.load(src0_ptr + offs), tl.load(src1_ptr + offs), tl.load(scale_ptr + offs)],
                                       dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, packed & 0xFF)


# Scale operands: powers of two over the whole E8M0 range, zero and the denormal 2^-127 (exponent field 0),
# a non-power of two (only the exponent is assumed to count), and Inf/NaN (field 255).
SCALE_BITS = [0x00000000, 0x00400000, 0x00800000, 0x3F800000, 0x3FC00000, 0x40800000, 0x7F000000, 0x7F800000,
              0x7FC00000, 0x2F800000, 0x4F800000]


def test_gfx950_bf16_conversion_model(real):
    pairs = np.arange(1 << 16, dtype=np.uint32)
    rng = np.random.default_rng(0)
    src = (pairs | (rng.permutation(pairs) << 16)).astype(np.uint32)  # every bf16 pattern in both halves
    for scale_bits in SCALE_BITS:
        scale = np.full(src.shape, scale_bits, dtype=np.uint32).view(np.float32)
        out = torch.empty(src.shape, dtype=torch.int32, device="cuda")
        _cvt_bf16_pairs[(src.size // 1024,)](torch.from_numpy(src.view(np.int32)).cuda(),
                                             torch.from_numpy(scale).cuda(), out, 1024)
        want = gfx950_asm.v_cvt_scalef32_pk_fp4_bf16(src, scale) & 0xFF
        got = out.cpu().numpy().astype(np.uint32)
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (f"scale 0x{scale_bits:08x}: {bad.size} mismatches, first src 0x{src[bad[0]]:08x} "
                               f"-> hw 0x{got[bad[0]]:02x}, model 0x{want[bad[0]]:02x}")


def test_gfx950_f32_conversion_model(real):
    rng = np.random.default_rng(1)
    specials = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x00000001, 0x80400000, 0x3E800000,
                         0x3E800001, 0x40A00000, 0x40C00000, 0x40E00000], dtype=np.uint32)
    src0 = np.concatenate([specials, rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint32)])[: 1 << 16]
    src1 = rng.permutation(src0)
    for scale_bits in SCALE_BITS:
        scale = np.full(src0.shape, scale_bits, dtype=np.uint32).view(np.float32)
        out = torch.empty(src0.shape, dtype=torch.int32, device="cuda")
        _cvt_f32_pairs[(src0.size // 1024,)](*(torch.from_numpy(a).cuda() for a in (src0.view(np.float32),
                                                                                      src1.view(np.float32), scale)),
                                            out, 1024)
        want = gfx950_asm.v_cvt_scalef32_pk_fp4_f32(src0.view(np.float32), src1.view(np.float32), scale) & 0xFF
        assert np.array_equal(out.cpu().numpy().astype(np.uint32), want), f"scale 0x{scale_bits:08x}"
