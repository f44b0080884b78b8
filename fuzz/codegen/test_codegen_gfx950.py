"""The fused kernel's gfx950 code, compiled ahead of time on this machine: every launch config we ship
uses the MFMA-scale instruction, does not spill, and has not regressed against the stored baseline.
The checker itself is tested on synthetic asm and on a config that must spill."""
import warnings

import pytest

from fuzz.codegen import gfx950
from kernels import configs

CASES = gfx950.default_cases()
SPILLING = gfx950.spilling_case()


@pytest.fixture(scope="module")
def compiled(request):
    if not request.config.getoption("--codegen"):
        pytest.skip("the gfx950 codegen check runs with --codegen (on by default in the ci and deep profiles)")
    ok, reason = gfx950.amd_backend_available()
    if not ok:
        pytest.skip(f"no gfx950 code generation here: {reason}")
    results = gfx950.compile_cases(CASES + [SPILLING])
    return {r["key"]: r for r in results}


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_config_uses_mfma_scale_and_does_not_spill(compiled, case):
    assert gfx950.problems(compiled[case.key]) == []


def test_launch_is_specialized_like_a_gpu_launch(compiled):
    split = compiled[gfx950.Case((16, 2112, 7168), "gfx950", configs.choose(16, 2112, 7168)).key]
    whole = compiled[gfx950.Case((7, 2880, 320), "portable", configs.choose(7, 2880, 320)).key]
    single_row = compiled[gfx950.Case((1, 512, 256), "portable", configs.choose(1, 512, 256)).key]
    for r in (split, whole):
        assert [r["signature"][p] for p in ("a_ptr", "w_ptr", "s_ptr")] == ["*bf16", "*u8", "*u8"]
        # unit strides become constexprs, as Triton specializes ints equal to 1
        assert all(r["signature"][s] == "constexpr" for s in ("stride_ak", "stride_wk", "stride_sk", "stride_yn"))
        assert {"a_ptr", "w_ptr", "s_ptr", "y_ptr", "N", "stride_am", "stride_wn", "stride_sn"} <= set(r["divisible"])
    assert split["signature"]["y_ptr"] == "*fp32" and whole["signature"]["y_ptr"] == "*u16"
    # shape-dependent values are runtime arguments and M is never specialized (one compile per config)
    for r in (split, whole, single_row):
        assert all(r["signature"][p] == "i32" for p in ("M", "N", "K", "SPLIT_K")), r["signature"]
        assert "M" not in r["divisible"]
    assert "SPLIT_K" in split["divisible"] and "K" in whole["divisible"]


def test_shapes_of_one_compile_key_get_one_specialization(compiled):
    """Every shipped shape whose config has the same compile key (tiles, warps, stages, cache modifier,
    striped or not) is bound by Triton to the same signature and divisibility: one compile, not one per
    shape or per stripe length."""
    groups = {}
    for case in CASES:
        r = compiled[case.key]
        key = (case.quantizer, case.config.compile_key())
        groups.setdefault(key, set()).add((tuple(sorted(r["signature"].items())), tuple(sorted(r["divisible"]))))
    assert any(len([c for c in CASES if (c.quantizer, c.config.compile_key()) == key]) > 2 for key in groups)
    assert {key: len(specializations) for key, specializations in groups.items()} == {key: 1 for key in groups}


def test_no_regression_against_the_baseline(compiled):
    import triton

    baseline = gfx950.load_baseline()
    if baseline["triton"] != triton.__version__:
        pytest.skip(f"the baseline is for triton {baseline['triton']}, this is {triton.__version__}: "
                    "register counts differ between versions (python -m fuzz.codegen.gfx950 --update-baseline)")
    cmp = gfx950.compare([compiled[c.key] for c in CASES], baseline)
    for key in cmp.new:
        warnings.warn(f"gfx950 config not in the baseline (reported, not failed): {key}")
    assert cmp.regressions == []


def test_a_spilling_config_fails_the_check(compiled):
    result = compiled[SPILLING.key]
    found = gfx950.problems(result)
    assert any("spills" in p and "VGPRs" in p for p in found), found
    assert any("scratch" in p for p in found), found
    clean = {**gfx950.summary(result), "vgpr_spill": 0, "sgpr_spill": 0, "scratch": 0}
    cmp = gfx950.compare([result], {"configs": {SPILLING.key: clean}})
    assert any("vgpr_spill grew" in r for r in cmp.regressions) and any("scratch grew" in r for r in cmp.regressions)


def test_rerun_is_served_from_the_cache(compiled):
    again = gfx950.compile_cases(CASES[:2])
    assert all(r["cached"] for r in again)
    assert [r["resources"] for r in again] == [compiled[c.key]["resources"] for c in CASES[:2]]


# ---- the checker on synthetic input (no compiler needed) ----

SYNTHETIC_ASM = """
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	v_cvt_scalef32_pk_fp4_bf16 v2, v4, v2
	v_cvt_scalef32_pk_fp4_bf16 v3, v5, v3
; Kernel info:
; codeLenInByte = 6296
; TotalNumSgprs: 64
; NumVgprs: 133
; NumAgprs: 4
; TotalNumVgprs: 140
; ScratchSize: 0
; NumVGPRsForWavesPerEU: 140
; Occupancy: 3
amdhsa.kernels:
  - .agpr_count:     4
    .private_segment_fixed_size: 0
    .sgpr_spill_count: 2
    .vgpr_spill_count: 0
"""


def test_parse_reads_every_field():
    r = gfx950.parse_amdgcn(SYNTHETIC_ASM, lds=40960, num_warps=8)
    assert (r.vgpr, r.agpr, r.total_vgpr, r.sgpr, r.occupancy, r.code_bytes) == (133, 4, 140, 64, 3, 6296)
    assert (r.vgpr_spill, r.sgpr_spill, r.scratch, r.cvt_fp4) == (0, 2, 0, 2)
    assert r.mfma == ("v_mfma_scale_f32_16x16x128_f8f6f4",)
    assert r.lds_occupancy == 8  # 4 workgroups of 8 waves on 4 SIMDs


def test_parse_refuses_asm_missing_a_field():
    with pytest.raises(ValueError, match="Occupancy"):
        gfx950.parse_amdgcn(SYNTHETIC_ASM.replace("; Occupancy: 3\n", ""), lds=0, num_warps=4)


def test_lds_occupancy_counts_workgroups_per_cu():
    assert gfx950.lds_occupancy(0, 4) == 8
    assert gfx950.lds_occupancy(24576, 4) == 6  # 6 workgroups of one wave per SIMD
    assert gfx950.lds_occupancy(81920, 8) == 4
    assert gfx950.lds_occupancy(200000, 8) == 0  # does not fit: the kernel cannot launch


def _result(key="k", quantizer="gfx950", **changes):
    resources = dict(vgpr=128, agpr=0, total_vgpr=128, sgpr=64, vgpr_spill=0, sgpr_spill=0, scratch=0, occupancy=4,
                     lds=2048, lds_occupancy=8, mfma=["v_mfma_scale_f32_32x32x64_f8f6f4"], cvt_fp4=64, code_bytes=1)
    resources.update(changes)
    return {"key": key, "case": {"quantizer": quantizer}, "resources": resources}


def test_compare_flags_only_what_costs_performance():
    base = {"configs": {"k": gfx950.summary(_result())}}
    margin = gfx950.vgpr_margin(128)
    assert gfx950.compare([_result(total_vgpr=128 + margin)], base).regressions == []
    assert gfx950.compare([_result(sgpr=100, lds=4096)], base).regressions == []
    for change, word in [(dict(total_vgpr=129 + margin), "VGPRs grew"), (dict(occupancy=3), "occupancy dropped"),
                         (dict(lds_occupancy=6), "lds_occupancy dropped"), (dict(sgpr_spill=1), "sgpr_spill grew"),
                         (dict(vgpr_spill=4, scratch=16), "vgpr_spill grew")]:
        regressions = gfx950.compare([_result(**change)], base).regressions
        assert regressions and word in regressions[0], (change, regressions)


def test_new_and_stale_configs_are_reported_not_failed():
    cmp = gfx950.compare([_result("new")], {"configs": {"old": gfx950.summary(_result("old"))}})
    assert (cmp.regressions, cmp.new, cmp.stale) == ([], ["new"], ["old"])


def test_problems_name_missing_instructions():
    assert gfx950.problems(_result()) == []
    assert "no MFMA-scale" in gfx950.problems(_result(mfma=["v_mfma_f32_32x32x8_bf16"]))[0]
    assert "v_cvt_scalef32_pk_fp4_bf16" in gfx950.problems(_result(cvt_fp4=0))[0]
    assert gfx950.problems(_result(quantizer="portable", cvt_fp4=0)) == []
    assert "LDS" in gfx950.problems(_result(lds=200000))[0]
    assert "compile failed" in gfx950.problems({"key": "k", "error": "NameError: x"})[0]


def test_a_triton_without_the_amd_backend_is_reported(monkeypatch):
    import triton.backends

    monkeypatch.setattr(triton.backends, "backends", {"nvidia": object()})
    ok, reason = gfx950.amd_backend_available()
    assert not ok and "no AMD backend" in reason


def test_cache_key_follows_the_kernels_jit_callees_only():
    names = {p.name for p in gfx950.kernel_sources()}
    assert {"fused.py", "triton_blocks.py"} <= names  # the kernel and the quantizers/unshuffles it calls
    assert "asm.py" not in names and "dispatch.py" not in names  # edits there cannot change the code
