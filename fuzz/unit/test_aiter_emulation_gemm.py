"""The emulated aiter GEMMs against the oracle's bound, their split-K rules, and aiter's strictness:
raise where aiter raises, and give wrong numbers (not errors) for wrong views, as aiter does."""
import pytest
import torch
import triton

from fuzz.testing.fixtures_aiter import assert_within_bound, emulated, preshuffled_views, unshuffled_b
from kernels.platform import detect
from reference import exact_gemm, exact_gemm_from_inputs, generate_input

aiter = emulated()
fp4_utils = emulated("utility.fp4_utils")
triton_quant = emulated("ops.triton.quant")
a16wfp4 = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
afp4wfp4 = emulated("ops.triton.gemm.basic.gemm_afp4wfp4")
kernels_a16wfp4 = emulated("ops.triton._triton_kernels.gemm.basic.gemm_a16wfp4")
kernels_afp4wfp4 = emulated("ops.triton._triton_kernels.gemm.basic.gemm_afp4wfp4")
kernels_quant = emulated("ops.triton._triton_kernels.quant.quant")
asm = emulated("ops.gemm_op_a4w4")
fp4x2, e8m0 = aiter.dtypes.fp4x2, aiter.dtypes.fp8_e8m0

DEVICE = detect().device
TRITON_ROUNDING = "rne"  # compiled, and in the interpreter as patched by reference.emulation.triton_interpreter
SPLIT_CONFIG = dict(BLOCK_SIZE_M=16, BLOCK_SIZE_N=64, BLOCK_SIZE_K=256, GROUP_SIZE_M=1, num_warps=4, num_stages=1,
                    waves_per_eu=1, matrix_instr_nonkdim=16, cache_modifier=".cg", NUM_KSPLIT=2)


def quantized_a(data):
    """A as the task's reference passes it to gemm_a4w4: fp4x2 codes, shuffled e8m0 scales."""
    codes, scales = triton_quant.dynamic_mxfp4_quant(data[0])
    return codes.view(fp4x2), fp4_utils.e8m0_shuffle(scales).view(e8m0)


@pytest.mark.parametrize("m, n, k", [(1, 64, 256), (16, 256, 512), (13, 128, 320)])
def test_gemm_a4w4_meets_the_bound(m, n, k):
    data = generate_input(m, n, k, seed=m + n + k, device=DEVICE)
    a_q, a_scale = quantized_a(data)
    out = aiter.gemm_a4w4(a_q, data[3], a_scale, data[4], dtype=aiter.dtypes.bf16, bpreshuffle=True)
    assert out.dtype == torch.bfloat16
    assert out.untyped_storage().nbytes() == (m + 31) // 32 * 32 * n * 2  # rows padded to 32, then sliced
    assert_within_bound(out, exact_gemm_from_inputs(data), "rne")


def test_gemm_a4w4_keeps_leading_dims_and_scales_by_alpha():
    data = generate_input(4, 64, 256, seed=1, device=DEVICE)
    a_q, a_scale = quantized_a(data)
    flat = aiter.gemm_a4w4(a_q, data[3], a_scale, data[4])
    batched = aiter.gemm_a4w4(a_q.view(2, 2, 128), data[3], a_scale, data[4])
    assert batched.shape == (2, 2, 64) and torch.equal(batched.reshape(4, 64), flat)
    assert torch.equal(aiter.gemm_a4w4(a_q, data[3], a_scale, data[4], alpha=2.0), 2 * flat)


def test_gemm_a4w4_raises_where_aiter_raises():
    data = generate_input(4, 64, 256, seed=2, device=DEVICE)
    a_q, a_scale = quantized_a(data)
    with pytest.raises(RuntimeError, match="Unsupported input_type"):
        aiter.gemm_a4w4(a_q.view(torch.uint8), data[3], a_scale, data[4])  # torch has float4_e2m1fn_x2
    with pytest.raises(RuntimeError, match="only support BFloat16"):
        aiter.gemm_a4w4(a_q, data[3], a_scale, data[4], dtype=torch.float16)
    out = torch.empty((32, 64), dtype=torch.bfloat16, device=DEVICE)
    with pytest.raises(RuntimeError, match="not find kernel gfx950f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128"):
        aiter.gemm_a4w4_asm(a_q, data[3], a_scale, data[4], out, "f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128")
    with pytest.raises(RuntimeError, match="Kdim % "):  # K = 256 is not a multiple of 2^9
        aiter.gemm_a4w4_asm(a_q, data[3], a_scale, data[4], out, asm.AsmKernel(256, 256, True, True).name,
                            log2_k_split=9)
    with pytest.raises(RuntimeError, match="cannot get heuristic kernel"):  # no split kernel without preshuffle
        aiter.gemm_a4w4_asm(a_q, data[3], a_scale, data[4], out, "", bpreshuffle=False, log2_k_split=1)


def test_gemm_a4w4_asm_splits_k_only_on_the_split_kernels():
    m, n, k = 8, 128, 1024
    data = generate_input(m, n, k, seed=3, device=DEVICE)
    a_q, a_scale = quantized_a(data)
    exact = exact_gemm_from_inputs(data)
    sentinel = torch.tensor(7.0, dtype=torch.bfloat16, device=DEVICE)

    def run(kernel_name, log2_k_split):
        out = torch.full((32, n), 7.0, dtype=torch.bfloat16, device=DEVICE)
        aiter.gemm_a4w4_asm(a_q, data[3], a_scale, data[4], out, kernel_name, log2_k_split=log2_k_split)
        return out

    ignored = run("_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E", 2)
    assert (ignored[m:] == sentinel).all()  # no split, so out is not zeroed: rows past M keep their bytes
    split = run("_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E", 2)
    assert (split[m:] == 0).all()  # split-K zeroes all of out first
    chosen = run("", 2)  # the heuristic must pick a split-capable kernel for a requested split
    assert (chosen[m:] == 0).all()
    for out in (ignored, split, chosen):
        assert_within_bound(out[:m], exact, "rne")


def test_gemm_a4w4_asm_kernel_table_has_the_mangled_names():
    names = {kernel.name for kernel in asm.ASM_KERNELS}
    assert len(names) == 35
    assert "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E" in names
    assert "_ZN5aiter44f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256E" in names
    assert {(k.tile_m, k.tile_n) for k in asm.ASM_KERNELS if k.split_k} == {(256, 256), (128, 512)}


def test_the_asm_kernels_reads_past_an_unpadded_scale_are_recorded_for_the_card():
    """The ASM kernel reads A_scale e8m0_shuffle'd with rows padded; given the quantizer's raw [M, K/32]
    scales it reads past them (aiter's own kernel reads the same offsets: on the runner, whatever memory lies
    there), and the card of the wrong output says so. Scales in the layout it expects read nothing past."""
    emulation = emulated("_emulation")
    data = generate_input(8, 64, 512, seed=4, device=DEVICE)
    a_q, a_scale = quantized_a(data)
    emulation.take_reads_past()
    aiter.gemm_a4w4(a_q, data[3], a_scale, data[4])
    assert emulation.take_reads_past() == []
    raw = triton_quant.dynamic_mxfp4_quant(data[0])[1].view(e8m0)
    aiter.gemm_a4w4(a_q, data[3], raw, data[4])
    (entry,) = emulation.take_reads_past()
    assert entry["what"] == "gemm_a4w4_asm A_scale" and 0 < entry["outside"] < entry["read"]
    assert entry["storage_bytes"] == raw.numel() and entry["shape"] == list(raw.shape)
    assert "past the storage" in emulation.describe_read_past(entry) and emulation.take_reads_past() == []


def test_wrong_views_give_wrong_numbers_not_errors():
    data = generate_input(8, 64, 512, seed=4, device=DEVICE)
    a_q, a_scale = quantized_a(data)
    right = aiter.gemm_a4w4(a_q, data[3], a_scale, data[4])
    b_not_shuffled = aiter.gemm_a4w4(a_q, data[2], a_scale, data[4])
    a_scale_not_shuffled = aiter.gemm_a4w4(a_q, data[3], triton_quant.dynamic_mxfp4_quant(data[0])[1].view(e8m0),
                                           data[4])
    for wrong in (b_not_shuffled, a_scale_not_shuffled):
        assert wrong.shape == right.shape and not torch.equal(wrong, right)
    w, _ = preshuffled_views(data)
    w_scale_not_viewed = data[4].view(torch.uint8)  # the raw (N_pad, cols) tensor instead of its (N_pad//32, ...) view
    wrong = a16wfp4.gemm_a16wfp4_preshuffle(data[0], w, w_scale_not_viewed)
    assert not torch.equal(wrong, a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data)))


@pytest.mark.parametrize("m, n, k, config", [(4, 64, 512, None), (16, 128, 512, SPLIT_CONFIG)])
def test_gemm_a16wfp4_preshuffle_meets_the_bound(m, n, k, config):
    data = generate_input(m, n, k, seed=5, device=DEVICE)
    out = a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data), config=config)
    assert_within_bound(out, exact_gemm_from_inputs(data), TRITON_ROUNDING)


def test_gemm_a16wfp4_preshuffle_skip_reduce_returns_fp32_partials():
    m, n, k = 5, 64, 512
    data = generate_input(m, n, k, seed=6, device=DEVICE)
    config = dict(SPLIT_CONFIG)
    partials = a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data), config=config, skip_reduce=True)
    assert partials.shape == (2, m, n) and partials.dtype == torch.float32
    assert config == SPLIT_CONFIG  # the caller's dict is not changed
    exact = exact_gemm_from_inputs(data)
    assert_within_bound(partials.sum(0).to(torch.bfloat16), exact, "rne", splits=2)
    y = torch.empty((m, n), dtype=torch.float32, device=DEVICE)  # y's dtype wins over `dtype`
    full = a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data), y=y, config={**SPLIT_CONFIG, "NUM_KSPLIT": 1})
    assert full is y
    assert_within_bound(full.to(torch.bfloat16), exact, "rne")  # fp32 stored as is, rounded here


def test_gemm_a16wfp4_and_afp4wfp4_meet_the_bound():
    m, n, k = 6, 128, 512
    data = generate_input(m, n, k, seed=7, device=DEVICE)
    exact = exact_gemm_from_inputs(data)
    b, b_scales = unshuffled_b(data)
    assert_within_bound(a16wfp4.gemm_a16wfp4(data[0], b, b_scales), exact, TRITON_ROUNDING)
    assert_within_bound(a16wfp4.gemm_a16wfp4(data[0], b, b_scales, config=SPLIT_CONFIG), exact, TRITON_ROUNDING)
    a_codes, a_scales = triton_quant.dynamic_mxfp4_quant(data[0])
    # The default table splits M <= 16 into 16; get_splitk trims that to what K = 512 allows.
    assert_within_bound(afp4wfp4.gemm_afp4wfp4(a_codes, b, a_scales, b_scales), exact, TRITON_ROUNDING)


def test_every_tile_is_computed_with_grouped_and_xcd_remapped_programs():
    # 3 x 6 output tiles: GROUP_SIZE_M = 2 leaves a shorter last group (aiter's pid_grid order there), and
    # 18 programs are not a multiple of the 8 XCDs that _gemm_afp4wfp4_kernel remaps programs over.
    m, n, k = 40, 192, 256
    data = generate_input(m, n, k, seed=12, device=DEVICE)
    exact = exact_gemm_from_inputs(data)
    b, b_scales = unshuffled_b(data)
    a_codes, a_scales = triton_quant.dynamic_mxfp4_quant(data[0])
    config = {**SPLIT_CONFIG, "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "GROUP_SIZE_M": 2, "NUM_KSPLIT": 1}
    runs = {
        "afp4wfp4": lambda y: afp4wfp4.gemm_afp4wfp4(a_codes, b, a_scales, b_scales, y=y, config=config),
        "a16wfp4": lambda y: a16wfp4.gemm_a16wfp4(data[0], b, b_scales, y=y, config=config),
        "a16wfp4_preshuffle": lambda y: a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data), y=y,
                                                                        config=config),
    }
    for name, run in runs.items():
        y = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device=DEVICE)  # an unwritten tile stays NaN
        assert run(y) is y, name
        assert_within_bound(y, exact, TRITON_ROUNDING)


def test_gemm_a16wfp4_atomic_add_accumulates_into_y():
    m, n, k = 3, 64, 256
    data = generate_input(m, n, k, seed=8, device=DEVICE)
    b, b_scales = unshuffled_b(data)
    y = torch.zeros((m, n), dtype=torch.float32, device=DEVICE)
    a16wfp4.gemm_a16wfp4(data[0], b, b_scales, atomic_add=True, y=y)
    a16wfp4.gemm_a16wfp4(data[0], b, b_scales, atomic_add=True, y=y)
    exact = exact_gemm(data[0], b, b_scales)
    assert_within_bound((y / 2).to(torch.bfloat16), exact, "rne")


@pytest.mark.parametrize("k_bytes, block_k, ksplit, want", [
    (3584, 512, 14, (512, 512, 14)),
    (3584, 512, 8, (1024, 512, 7)),
    (768, 512, 14, (512, 512, 3)),
    (1024, 512, 14, (512, 512, 4)),
    (256, 256, 8, (256, 256, 2)),
])
def test_get_splitk_table(k_bytes, block_k, ksplit, want):
    assert afp4wfp4.get_splitk(k_bytes, block_k, ksplit) == want


def test_the_kernel_modules_get_splitk_lacks_the_final_recount():
    assert kernels_a16wfp4.get_splitk(3584, 512, 8) == (1024, 512, 8)
    assert afp4wfp4.get_splitk(3584, 512, 8) == (1024, 512, 7)


def test_one_block_covering_k_ends_the_split():
    # K = 512 elements with BLOCK_SIZE_K = 512 and 14 splits asked for: one split, skip_reduce ignored.
    data = generate_input(2, 64, 512, seed=9, device=DEVICE)
    config = {**SPLIT_CONFIG, "BLOCK_SIZE_K": 512, "NUM_KSPLIT": 14}
    out = a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data), config=config, skip_reduce=True)
    assert out.shape == (2, 64)


def test_internal_kernels_have_aiters_signatures():
    preshuffle = kernels_a16wfp4._gemm_a16wfp4_preshuffle_kernel
    assert preshuffle.fn.arg_names == [
        "a_ptr", "b_ptr", "c_ptr", "b_scales_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bn",
        "stride_bk", "stride_ck", "stride_cm", "stride_cn", "stride_bsn", "stride_bsk", "BLOCK_SIZE_M",
        "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "NUM_KSPLIT", "SPLITK_BLOCK_SIZE", "EVEN_K", "num_warps",
        "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "GRID_MN", "PREQUANT", "cache_modifier"]
    assert set(preshuffle.values) == {"EVEN_K", "GRID_MN"}  # submissions override these heuristics
    assert kernels_afp4wfp4._gemm_afp4wfp4_reduce_kernel.fn.arg_names == [
        "c_in_ptr", "c_out_ptr", "M", "N", "stride_c_in_k", "stride_c_in_m", "stride_c_in_n", "stride_c_out_m",
        "stride_c_out_n", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "ACTUAL_KSPLIT", "MAX_KSPLIT"]
    assert kernels_quant._mxfp4_quant_op.arg_names == [
        "x", "BLOCK_SIZE_N", "BLOCK_SIZE_M", "MXFP4_QUANT_BLOCK_SIZE"]
    # GEMM kernels find the quantizer as a module global, where submissions patch it.
    assert kernels_a16wfp4._mxfp4_quant_op is kernels_quant._mxfp4_quant_op


def launch_preshuffle(data, c, **overrides):
    """_gemm_a16wfp4_preshuffle_kernel launched by hand, as submissions do."""
    m, k = data[0].shape
    w, w_scales = preshuffled_views(data)
    config = {**SPLIT_CONFIG, "NUM_KSPLIT": 1, "SPLITK_BLOCK_SIZE": k, **overrides}
    grid = (triton.cdiv(m, 16) * triton.cdiv(c.shape[-1], 64),)
    kernels_a16wfp4._gemm_a16wfp4_preshuffle_kernel[grid](
        data[0], w, c, w_scales, m, c.shape[-1], k // 2, *data[0].stride(), *w.stride(), 0, *c.stride(),
        *w_scales.stride(), PREQUANT=config.pop("PREQUANT", True), **config)


def test_preshuffle_kernel_refuses_what_aiters_source_cannot_compile():
    data = generate_input(2, 64, 512, seed=10, device=DEVICE)
    c = torch.empty((2, 64), dtype=torch.bfloat16, device=DEVICE)
    with pytest.raises(Exception, match="EVEN_K"):
        launch_preshuffle(data, c, SPLITK_BLOCK_SIZE=384)  # 512 % 384 != 0
    with pytest.raises(Exception, match="PREQUANT"):
        launch_preshuffle(data, c, PREQUANT=False)
    with pytest.raises(AssertionError, match="prequant"):
        a16wfp4.gemm_a16wfp4_preshuffle(data[0], *preshuffled_views(data), prequant=False)


def test_triton_kernels_refuse_fp4x2_and_e8m0_tensors_like_triton():
    # aiter hands the tensors to Triton unchanged; Triton has no pointer type for these torch dtypes.
    data = generate_input(2, 64, 512, seed=11, device=DEVICE)
    w, w_scales = preshuffled_views(data)
    with pytest.raises(KeyError, match="float4_e2m1fn_x2"):
        a16wfp4.gemm_a16wfp4_preshuffle(data[0], w.view(fp4x2), w_scales)
    with pytest.raises(KeyError, match="float8_e8m0fnu"):
        a16wfp4.gemm_a16wfp4_preshuffle(data[0], w, w_scales.view(e8m0))


def test_reduce_kernel_sums_only_the_actual_splits():
    m, n, splits = 3, 64, 3
    partials = torch.randn((4, m, n), generator=torch.Generator().manual_seed(0)).to(DEVICE)
    partials[3] = float("nan")  # the padded slice (MAX_KSPLIT = 4) must not be read
    y = torch.empty((m, n), dtype=torch.float32, device=DEVICE)
    kernels_afp4wfp4._gemm_afp4wfp4_reduce_kernel[(1, 1)](partials, y, m, n, *partials.stride(), *y.stride(),
                                                          16, 64, splits, 4)
    assert torch.allclose(y, partials[:splits].sum(0), rtol=1e-6, atol=0)



def test_the_gluon_reduce_kernel_files_launch_is_the_triton_reduce():
    """aiter's Gluon ``_gemm_afp4wfp4_reduce_kernel`` has the Triton reduce kernel's signature and arithmetic at
    the runner's commit (layouts aside): files import it from aiter.ops.triton.gluon.gemm_afp4wfp4 and launch it
    (dgavriloff's v211); the rest of that module is not emulated."""
    gluon = emulated("ops.triton.gluon.gemm_afp4wfp4")
    reduce = gluon._gemm_afp4wfp4_reduce_kernel
    assert reduce.fn.arg_names == kernels_afp4wfp4._gemm_afp4wfp4_reduce_kernel.fn.arg_names
    m, n = 5, 64
    partials = torch.randn((4, m, n), generator=torch.Generator().manual_seed(1)).to(DEVICE)
    partials[3] = float("nan")  # MAX_KSPLIT = 4, ACTUAL_KSPLIT = 3: the padded slice is never read
    y = torch.empty((m, n), dtype=torch.bfloat16, device=DEVICE)
    reduce[(1, 1)](partials, y, m, n, *partials.stride(), *y.stride(), 16, 64, 3, 4)
    want = partials[:3].sum(0)  # one conversion at the end: within half a bf16 ulp of the fp32 sum
    assert torch.all((y.float() - want).abs() <= want.abs() * 2.0 ** -8 + 1e-6)
    assert not hasattr(gluon, "_gemm_afp4wfp4_kernel")
