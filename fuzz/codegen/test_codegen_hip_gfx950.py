"""Our HIP fold (kernels/fold/fold_kernel.cu) built for gfx950 on this machine, no GPU: every kernel
``fold_launch`` can start is in the code object, none spills, none regressed against the stored
baseline; a broken fold is a compile error naming its line and a fold that asks for more waves than
its registers allow is reported as spilling. The checker's parsing is tested on the compiler's own
text (no compiler needed)."""
import pytest

from fuzz.codegen import hip_gfx950

BROKEN_LINE = "                a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;"


@pytest.fixture(scope="module")
def toolchain(request):
    if not request.config.getoption("--codegen"):
        pytest.skip("the gfx950 codegen check runs with --codegen (on by default in the ci and deep profiles)")
    found, reason = hip_gfx950.find_toolchain()
    if found is None:
        pytest.skip(f"no HIP compiler for gfx950 here: {reason}")
    return found


@pytest.fixture(scope="module")
def fold(toolchain):
    return hip_gfx950.build_fold()


def variant(old: str, new: str) -> hip_gfx950.Source:
    """The fold with one edit, still named and mapped as kernels/fold/fold_kernel.cu."""
    source = hip_gfx950.fold_source()
    assert source.text.count(old) == 1, old
    return hip_gfx950.Source(source.name, source.text.replace(old, new), source.origin)


def test_fold_builds_every_launchable_kernel_without_spills(fold):
    assert fold.ok, fold.first_error()
    assert hip_gfx950.problems(fold) == []
    names = {k.short for k in fold.kernels}
    assert names == hip_gfx950.fold_instantiations(fold.source.text)
    assert {"fold_scalar_kernel", "fold_vector_kernel<0>", "fold_vector_kernel<14>"} <= names
    assert all(k.resolved and k.origin_line for k in fold.kernels)


def test_fold_has_not_regressed_against_the_baseline(fold, toolchain):
    baseline = hip_gfx950.load_baseline()
    if baseline["compiler"] != toolchain.major:
        pytest.skip(f"the baseline is for {baseline['compiler']}, this is {toolchain.major}: register counts "
                    "differ between compilers (python -m fuzz.codegen.hip_gfx950 --update-baseline)")
    cmp = hip_gfx950.compare(fold, baseline)
    assert (cmp.regressions, cmp.new, cmp.stale) == ([], [], [])


def test_a_broken_fold_is_a_compile_error_naming_its_line(toolchain):
    broken = variant(BROKEN_LINE, BROKEN_LINE.replace("v.w;", "v.q;"))
    line = broken.text.splitlines().index(BROKEN_LINE.replace("v.w;", "v.q;")) + 1
    result = hip_gfx950.build_fold(broken)
    assert not result.ok and result.kernels == []
    (error,) = [e for e in result.errors if "no member named 'q'" in e.message]
    assert (error.origin, error.origin_line) == (str(hip_gfx950.FOLD_SOURCE), line)
    assert error.describe().startswith(f"{hip_gfx950.FOLD_SOURCE}:{line}: ")
    assert any(f"fold_kernel.cu:{line}:" in p for p in hip_gfx950.problems(result))


def test_a_fold_that_demands_eight_waves_spills_and_is_reported(fold, toolchain):
    """amdgpu_waves_per_eu(8, 8) caps each wave at 64 VGPRs: the unrolled 8- and 14-way folds need more."""
    demanding = variant("__global__ void fold_vector_kernel(",
                        "__attribute__((amdgpu_waves_per_eu(8, 8))) __global__ void fold_vector_kernel(")
    result = hip_gfx950.build_fold(demanding)
    assert result.ok, result.first_error()
    spilling = {k.short for k in result.kernels if k.vgpr_spill}
    assert {"fold_vector_kernel<8>", "fold_vector_kernel<14>"} <= spilling
    assert any("spills" in p and "VGPRs to scratch" in p for p in hip_gfx950.problems(result))
    assert any("scratch per lane" in p for p in hip_gfx950.problems(result))
    clean = {"configs": {r["key"]: r["summary"] for r in hip_gfx950.summaries(fold)}}
    regressions = hip_gfx950.compare(result, clean).regressions
    assert any(r.startswith("fold_vector_kernel<14>: vgpr_spill grew 0 ->") for r in regressions), regressions


def test_inline_asm_goes_through_the_gfx950_assembler(toolchain):
    text = ("#include <hip/hip_runtime.h>\n"
            "__global__ void k(unsigned* out, unsigned a, float s) {\n"
            "    unsigned r = 0;\n"
            '    asm volatile("v_cvt_scalef32_pk_fp4_bf16 %0, %1, %2" : "+v"(r) : "v"(a), "v"(s));\n'
            "    out[threadIdx.x] = r;\n"
            "}\n")
    good = hip_gfx950.build(hip_gfx950.Source("asm.hip", text), use_cache=False)
    assert good.ok and [k.name for k in good.kernels] == ["k(unsigned int*, unsigned int, float)"], good.first_error()
    bad = hip_gfx950.build(hip_gfx950.Source("asm.hip", text.replace("v_cvt_scalef32_pk_fp4_bf16", "v_cvt_nonsense")),
                           use_cache=False)
    assert not bad.ok and (bad.errors[0].line, bad.errors[0].message) == (4, "invalid instruction")


def test_a_rebuild_is_served_from_the_cache(fold, toolchain):
    again = hip_gfx950.build_fold()
    assert again.cached and [k.summary() for k in again.kernels] == [k.summary() for k in fold.kernels]


# ---- the checker on the compiler's text (no compiler needed) ----

REMARKS = """\
fold.hip:110:1: remark: Function Name: _Z18fold_scalar_kernelPKfPtxxi [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     TotalSGPRs: 26 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     VGPRs: 10 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     AGPRs: 3 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     ScratchSize [bytes/lane]: 84 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     Dynamic Stack: False [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     Occupancy [waves/SIMD]: 7 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     VGPRs Spill: 20 [-Rpass-analysis=kernel-resource-usage]
fold.hip:110:1: remark:     LDS Size [bytes/block]: 512 [-Rpass-analysis=kernel-resource-usage]
fold.hip:79:1: remark: Function Name: _Z6callerv [-Rpass-analysis=kernel-resource-usage]
fold.hip:79:1: remark:     TotalSGPRs: _Z6callerv.numbered_sgpr+6 [-Rpass-analysis=kernel-resource-usage]
fold.hip:79:1: remark:     VGPRs: _Z6callerv.num_vgpr [-Rpass-analysis=kernel-resource-usage]
fold.hip:79:1: remark:     Dynamic Stack: True [-Rpass-analysis=kernel-resource-usage]
"""


def test_remarks_give_every_figure_and_unresolved_ones_are_named():
    source = hip_gfx950.Source("fold.hip", "", "submission.py", lines={110: 140, 79: 109})
    first, second = hip_gfx950.parse_remarks(REMARKS, source)
    assert first.name.startswith("fold_scalar_kernel(") and (first.line, first.origin_line) == (110, 140)
    assert (first.vgpr, first.agpr, first.total_vgpr, first.sgpr, first.occupancy, first.lds) == (10, 3, 15, 26, 7, 512)
    assert (first.vgpr_spill, first.sgpr_spill, first.scratch, first.dynamic_stack) == (20, 0, 84, False)
    assert [f.split(": ", 1)[1] for f in first.findings()] == ["spills 20 VGPRs to scratch memory",
                                                             "uses 84 bytes of scratch per lane"]
    assert second.vgpr is None and not second.resolved and second.dynamic_stack
    assert any("not resolved" in f for f in second.findings()) and any("dynamic stack" in f for f in second.findings())


def test_errors_map_to_the_origin_line_and_driver_errors_are_kept():
    output = ("In file included from merge.cu:3:\n"
              "/usr/include/hip/foo.h:7:2: error: something in a header\n"
              "merge.cu:12:9: error: use of undeclared identifier 'blockIdx_x'\n"
              "merge.cu:13:1: fatal error: 'ATen/hip/Nope.h' file not found\n"
              "clang++-22: error: unsupported option '--bogus'\n")
    source = hip_gfx950.Source("merge.cu", "", "sub.py", lines={12: 52})
    header, own, unmapped, driver = hip_gfx950.parse_errors(output, source)
    assert header.describe() == "/usr/include/hip/foo.h:7:2: something in a header"
    assert own.describe() == "sub.py:52: use of undeclared identifier 'blockIdx_x'"
    assert unmapped.origin_line is None and unmapped.describe().startswith("merge.cu:13:1: ")
    assert driver.file is None and driver.describe() == "unsupported option '--bogus'"


def test_line_map_follows_added_and_rewritten_lines():
    old = ["#include <cuda.h>", "__global__ void k() {", "  k<<<1, 2>>>();", "}"]
    new = ["// generated", "#include <hip/hip_runtime.h>", "__global__ void k() {", "  hipLaunchKernelGGL(k);", "}"]
    assert hip_gfx950.line_map(old, new) == {2: 1, 3: 2, 4: 3, 5: 4}


def test_total_vgprs_put_agprs_after_vgprs_rounded_to_four():
    kernel = hip_gfx950.Kernel("k", "k", None, None, 10, 0, 0, 0, 0, 0, False, 8, 0)
    assert kernel.total_vgpr == 10
    assert hip_gfx950.Kernel(**{**kernel.__dict__, "agpr": 5}).total_vgpr == 17


def test_no_compiler_is_a_reason_not_a_crash(monkeypatch):
    monkeypatch.setenv(hip_gfx950.ENV_COMPILER, "/nonexistent/hipcc")
    hip_gfx950.find_toolchain.cache_clear()
    try:
        found, reason = hip_gfx950.find_toolchain()
    finally:
        hip_gfx950.find_toolchain.cache_clear()
    assert found is None and "/nonexistent/hipcc" in reason and "apt-get install" in reason


def test_barriers_and_fences_link_as_on_rocm(toolchain):
    """__syncthreads and __threadfence* (HIP 5.2's headers call __atomic_work_item_fence, which Debian's
    device libraries lack) build: a kernel with a barrier failed to link here once, a false 'does not
    build' for nearly every real HIP file."""
    text = ("#include <hip/hip_runtime.h>\n"
            "__global__ void k(float* x) {\n"
            "    __shared__ float s[256];\n"
            "    s[threadIdx.x] = x[threadIdx.x];\n"
            "    __syncthreads();\n"
            "    __threadfence(); __threadfence_block();\n"
            "    x[threadIdx.x] = s[255 - threadIdx.x];\n"
            "}\n")
    built = hip_gfx950.build(hip_gfx950.Source("barrier.hip", text), use_cache=False)
    assert built.ok, built.first_error()
    assert [k.name for k in built.kernels] == ["k(float*)"]
