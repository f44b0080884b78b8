"""The builds_gfx950 verdict (fuzz/submission/hip_builds.py): HIP sources a submission builds at runtime,
recorded on the CPU tier and built for gfx950. The three HIP examples are correct here through their
fallbacks and get exactly their build verdict: the quantizer builds (its kernel's figures, at its line),
the compile error fails naming the file's line, the spill is reported (failed with --strict-resources).
``load`` and ``hipcc`` through ``subprocess`` are planned and mapped too. The verdict fails only for errors
the runner's ROCm 7.1 would report (``build_toolchain_limit``): a header ROCm 7.1 has and our packaged HIP 5.2
lacks, a name its headers declare, or a device-link failure of our toolchain is NOT RUN naming what is
missing; the file's own compile errors stay FAIL. Compiles skip where no compiler builds for gfx950 (the
reason says what is missing)."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fuzz.codegen import hip_gfx950
from fuzz.codegen.hip_gfx950 import Diagnostic
from fuzz.search.strategies import Case
from fuzz.submission import checks, hip_builds
from fuzz.submission.report_text import EXIT_LATENT
from fuzz.submission.runner import SubmissionRunner
from kernels.platform import detect
from reference.emulation.hip_cpu.build import find_clang

ROOT = Path(__file__).resolve().parents[2]
TIER = detect().tier  # the tier the verdicts are worded for
EXAMPLES = ROOT / "fuzz" / "examples"
HIP_EXAMPLES = ("hip_load_inline_quant.py", "hip_load_inline_compile_error.py", "hip_load_inline_spill.py")
EXPECTED = {"hip_load_inline_quant.py": "pass", "hip_load_inline_compile_error.py": "fail",
            "hip_load_inline_spill.py": "reported"}


def line_of(path: Path, text: str) -> int:
    (line,) = [i + 1 for i, s in enumerate(path.read_text().splitlines()) if text in s]
    return line


@pytest.fixture(scope="module")
def toolchain():
    found, reason = hip_gfx950.find_toolchain()
    if found is None:
        pytest.skip(f"no HIP compiler for gfx950 here: {reason}")
    return found


def verdicts_of(name: str) -> dict:
    """Official, contract, correctness and the build verdict (plus its --strict-resources twin) on one example."""
    runner = SubmissionRunner(EXAMPLES / name, aiter="emulated", timeout=120)
    try:
        ctx = checks.Context(runner, TIER)
        found = {
            "official": checks.check_official(ctx),
            "contract": checks.check_contract(ctx, [Case(2, 64, 64, seed=1), Case(3, 128, 128, seed=2)]),
            "correctness": checks.check_correctness(ctx, Case(2, 64, 320, layout="row_sliced", seed=4)),
        }
        if hip_gfx950.find_toolchain()[0] is not None:
            found["builds_gfx950"] = hip_builds.check_builds_gfx950(ctx)
            found["strict"] = hip_builds.check_builds_gfx950(ctx, strict=True)
        return found
    finally:
        runner.close()


@pytest.fixture(scope="module")
def outcomes() -> dict:
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(HIP_EXAMPLES, pool.map(verdicts_of, HIP_EXAMPLES)))


@pytest.mark.slow
@pytest.mark.parametrize("name", HIP_EXAMPLES)
def test_each_hip_example_is_correct_through_its_hip_or_its_fallback(outcomes, name):
    found = outcomes[name]
    assert {v: found[v].status for v in ("official", "contract", "correctness")} == \
        {"official": "pass", "contract": "pass", "correctness": "pass"}, {v: o.summary for v, o in found.items()
                                                                          if hasattr(o, "summary")}


@pytest.mark.slow
@pytest.mark.parametrize("name", HIP_EXAMPLES)
def test_each_hip_example_gets_its_build_verdict(outcomes, toolchain, name):
    outcome, why, report = outcomes[name]["builds_gfx950"]
    assert outcome is not None, why
    assert outcome.status == EXPECTED[name], outcome.summary
    (build,) = report
    # the quantizer's HIP runs on the CPU model of gfx950 where clang++ is (docs/hip_cpu.md); the others'
    # builds fail or are refused there too, and their fallback serves
    served = "the file's own HIP" if name == "hip_load_inline_quant.py" and find_clang() else "PyTorch operations"
    assert build["origin"] == name and build["served_here"].startswith(served), build["served_here"]
    assert f"served by {served}" in outcome.summary or outcome.card is not None


@pytest.mark.slow
def test_the_built_kernel_has_its_figures_at_its_line(outcomes, toolchain):
    outcome, _, (build,) = outcomes["hip_load_inline_quant.py"]["builds_gfx950"]
    (kernel,) = build["kernels"]
    assert kernel["line"] == line_of(EXAMPLES / "hip_load_inline_quant.py", "__global__ void mxfp4_quant_kernel(")
    assert kernel["vgpr_spill"] == kernel["scratch"] == 0 and kernel["occupancy"] >= 1 and kernel["vgpr"] > 0
    assert f"mxfp4_quant_kernel: {kernel['vgpr']} VGPRs" in outcome.summary


@pytest.mark.slow
def test_a_compile_error_names_the_submissions_line(outcomes, toolchain):
    name = "hip_load_inline_compile_error.py"
    outcome, _, (build,) = outcomes[name]["builds_gfx950"]
    line = line_of(EXAMPLES / name, "if (i >= numel) return;")
    assert f"{name}:{line}: use of undeclared identifier 'numel'" in outcome.summary
    assert build["errors"][0]["origin_line"] == line and build["kernels"] == []
    card = outcome.card.render()
    assert "builds_gfx950" in card and f"{name}:{line}" in card and "served by PyTorch operations" in card


@pytest.mark.slow
def test_a_spill_is_reported_and_fails_only_when_strict(outcomes, toolchain):
    name = "hip_load_inline_spill.py"
    reported, _, (build,) = outcomes[name]["builds_gfx950"]
    strict, _, _ = outcomes[name]["strict"]
    (kernel,) = build["kernels"]
    assert kernel["vgpr_spill"] > 0 and kernel["scratch"] > 0
    assert kernel["line"] == line_of(EXAMPLES / name, "mxfp4_quant_tile_kernel(const uint16_t*")
    assert reported.status == "reported" and "spills" in reported.summary
    assert strict.status == "fail" and "--strict-resources" in strict.summary


@pytest.mark.slow
def test_a_file_without_hip_skips_the_build_verdict_with_its_reason():
    runner = SubmissionRunner(EXAMPLES / "correct_reference_style.py", aiter="emulated")
    try:
        outcome, why, report = hip_builds.check_builds_gfx950(checks.Context(runner, TIER))
    finally:
        runner.close()
    assert (outcome, report) == (None, []) and "builds no HIP" in why


@pytest.mark.slow
def test_the_report_and_terminal_carry_the_figures(tmp_path, toolchain):
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pytest", str(ROOT / "fuzz" / "test_submission.py"), "-p", "no:cacheprovider",
               "--submission", str(EXAMPLES / "hip_load_inline_spill.py"), "--aiter", "emulated", "-k", "builds_gfx950",
               "--strict-resources", "--submission-report", str(report), "-q"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == EXIT_LATENT, done.stdout[-3000:] + done.stderr[-2000:]  # no mode fails for it
    assert "builds_gfx950  FAIL" in done.stdout and "mxfp4_quant_tile_kernel line" in done.stdout
    data = json.loads(report.read_text())
    (build,) = data["hip_builds"]
    assert build["kernels"][0]["vgpr_spill"] > 0 and build["findings"]
    assert {v["verdict"]: v["status"] for v in data["verdicts"]} == {"builds_gfx950": "FAIL"}


# ---- load and hipcc: planned from synthetic attempts (what no_rocm records) ----

KERNEL_CU = """#include <cuda_runtime.h>
__global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""


def test_load_of_a_cu_file_is_hipified_and_keeps_its_lines(tmp_path, toolchain):
    path = tmp_path / "scale.cu"
    path.write_text(KERNEL_CU.replace("2.0f * x[i]", "2.0f * x[j]"))
    attempt = {"api": "load", "where": "sub.py:9", "name": "scale_ext", "sources": {"scale.cu": path.read_text()},
               "command": [], "options": {"paths": {"scale.cu": str(path)}, "extra_cuda_cflags": ["-O2", "--offload-arch=gfx942"]}}
    (planned,) = hip_builds.plan(attempt, str(tmp_path / "sub.py"))
    assert "--offload-arch=gfx942" not in planned.flags and "-O2" in planned.flags
    assert "hip/hip_runtime.h" in planned.source.text and "hipified" in planned.source.note
    result = hip_gfx950.build(planned.source, planned.flags, planned.include_dirs, key_extra=planned.key_extra)
    assert not result.ok
    assert result.errors[0].describe() == f"{path}:4: use of undeclared identifier 'j'"


def test_hipcc_through_subprocess_builds_each_source_with_the_commands_flags(tmp_path, toolchain):
    path = tmp_path / "k.hip"
    path.write_text("#include <hip/hip_runtime.h>\n#ifndef SCALE\n#error SCALE not defined\n#endif\n"
                    + KERNEL_CU.replace("#include <cuda_runtime.h>\n", "").replace("2.0f", "SCALE"))
    command = ["hipcc", "-O3", "-DSCALE=3.0f", "--offload-arch=gfx942", "-shared", "-fPIC", str(path), "-o", "k.so"]
    attempt = {"api": "subprocess", "where": "sub.py:3", "name": "", "sources": {"k.hip": path.read_text()},
               "command": command, "options": {"paths": {"k.hip": str(path)}}}
    (planned,) = hip_builds.plan(attempt, str(tmp_path / "sub.py"))
    assert planned.flags == ["-O3", "-DSCALE=3.0f"]
    result = hip_gfx950.build(planned.source, planned.flags, planned.include_dirs)
    assert result.ok and [(k.short, k.line) for k in result.kernels] == [("scale", 5)], result.first_error()


def test_the_same_build_recorded_by_every_program_is_built_once():
    a = {"api": "load_inline", "name": "x", "sources": {"x.cu": "k"}, "options": {}, "command": [], "where": "f:1"}
    assert hip_builds.distinct([a, dict(a), {**a, "name": "y"}]) == [a, {**a, "name": "y"}]


def test_a_build_another_program_recorded_is_judged_though_the_probe_saw_none(tmp_path, toolchain):
    """A file that builds only when its library is missing records the build in the first program of one worker;
    builds_gfx950's probe, a later program, saw none and said SKIP (kernelsanders #226 on a warm worker, stop 54).
    The runner keeps every program's builds, once each."""
    from types import SimpleNamespace

    from fuzz.submission.runner import SubmissionRunner

    attempt = {"api": "load_inline", "name": "x", "where": "f.py:3", "command": [], "options": {},
               "sources": {"x.cu": KERNEL_CU}}
    runner = SimpleNamespace(path=str(tmp_path / "f.py"), hip_builds_seen=[])
    for _ in range(2):
        SubmissionRunner._note_hip_builds(runner, [{"hip_builds": [dict(attempt)]}, {"out": "y"}])
    assert runner.hip_builds_seen == [attempt]

    class Ctx:
        tier = TIER

        def __init__(self, runner):
            self.runner = runner

        def execute(self, program):
            return SimpleNamespace(kind="ok"), {"y": {"hip_builds": []}}

        def outcome(self, verdict, status, summary, *rest, **kw):
            return SimpleNamespace(verdict=verdict, status=status, summary=summary)

    outcome, why, report = hip_builds.check_builds_gfx950(Ctx(runner))
    assert outcome is not None and outcome.status == "pass" and len(report) == 1, why
    runner.hip_builds_seen = []
    outcome, why, _ = hip_builds.check_builds_gfx950(Ctx(runner))
    assert outcome is None and "builds no HIP" in why


def test_compile_flags_keep_what_changes_code_and_drop_arch_and_link():
    flags = ["-O3", "-I", "inc", "-DX=1", "--offload-arch=gfx942", "-ffast-math", "-lfoo", "-Wl,-rpath,x", "-x", "hip",
             "-o", "out.so", "-shared", "-mcumode"]
    assert hip_builds._compile_flags(flags) == ["-O3", "-I", "inc", "-DX=1", "-ffast-math", "-mcumode"]


SEED_FUSED = ROOT.parent / "shared" / "seeds" / "seed2_fused_triton_submission.py"


@pytest.mark.slow
@pytest.mark.skipif(not SEED_FUSED.exists(), reason="../shared/seeds is not here (the project's seed submissions)")
def test_the_fused_seeds_hip_fold_never_builds_because_hipify_mangles_its_switch(tmp_path, toolchain):
    """A real file: the fused seed builds its split-K fold with load_inline and falls back to Triton when
    that raises. torch's own hipify turns ``case 2:wide_fold<2><<<bl,t>>>(...)`` into
    ``casehipLaunchKernelGGL(( 2:wide_fold<2>), ...)``, so on a ROCm runner the fold never builds and the
    fallback silently serves every call. builds_gfx950 says so, at the file's lines."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pytest", str(ROOT / "fuzz" / "test_submission.py"), "-p", "no:cacheprovider",
               "--submission", str(SEED_FUSED), "--aiter", "emulated", "-k", "loads or builds_gfx950",
               "--submission-report", str(report), "-q"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    data = json.loads(report.read_text())
    assert {v["verdict"]: v["status"] for v in data["verdicts"]} == {"loads": "PASS", "builds_gfx950": "FAIL"}, \
        done.stdout[-3000:]
    (build,) = data["hip_builds"]
    lines = SEED_FUSED.read_text().splitlines()
    mangled = [e for e in build["errors"] if "casehipLaunchKernelGGL" in e["message"]]
    assert mangled and all("case " in lines[e["origin_line"] - 1] and "<<<" in lines[e["origin_line"] - 1]
                           for e in mangled), build["errors"]


# The clang-22 driver's and lld's own words (a device build with two undefined functions, this machine)
LINK_SUMMARY = "amdgcn-link command failed with exit code 1 (use -v to see invocation)"
LLD_OUTPUT = """lld: error: undefined hidden symbol: {symbol}
>>> referenced by /tmp/l1-gfx950-2d708d.o:(k(float*))
clang++-22: error: amdgcn-link command failed with exit code 1 (use -v to see invocation)
"""


def result(errors):
    return hip_gfx950.BuildResult(hip_gfx950.Source("k.hip", ""), False, errors, [], 0.0, [], "test")


def test_the_link_failure_of_our_toolchain_is_not_the_files():
    assert "device link failed" in hip_builds.toolchain_limit(Diagnostic(None, None, None, LINK_SUMMARY))
    parsed = hip_gfx950.parse_errors(LLD_OUTPUT.format(symbol="__ocml_new_in_rocm7_f32"))
    assert [e.message for e in parsed] == ["device link (lld): undefined hidden symbol: __ocml_new_in_rocm7_f32",
                                           LINK_SUMMARY]
    reason = hip_builds.build_toolchain_limit(result(parsed))
    assert reason and "__ocml_new_in_rocm7_f32" in reason and "ROCm 7.1 links it" in reason


def test_an_llvm_option_our_llvm_lacks_is_not_the_files():
    """-mllvm -amdgpu-early-inline-all=true (a real file's flag): LLVM 22 dropped it; whether the runner's
    ROCm LLVM still takes it cannot be told here, so it is NOT RUN, never a FAIL."""
    message = "clang (LLVM option parsing): Did you mean '--mv5'?"
    assert "-mllvm option" in hip_builds.toolchain_limit(Diagnostic(None, None, None, message))


def test_an_undefined_device_function_of_the_files_own_fails():
    parsed = hip_gfx950.parse_errors(LLD_OUTPUT.format(symbol="my_helper"))
    assert hip_builds.build_toolchain_limit(result(parsed)) is None


def test_headers_and_names_rocm71_has():
    def limit(message):
        return hip_builds.toolchain_limit(Diagnostic("k.hip", 3, 10, message))

    assert "lacks hip/hip_ext_ocp.h" in limit("'hip/hip_ext_ocp.h' file not found")
    assert "lacks hip/amd_detail/amd_hip_bfloat16.h" in limit("'hip/amd_detail/amd_hip_bfloat16.h' file not found")
    assert limit("'my_kernels/common.h' file not found") is None  # no ROCm has it: the runner fails too
    assert "__hip_bfloat16" in limit("unknown type name '__hip_bfloat16'")
    assert limit("use of undeclared identifier 'acc_tile'") is None
    # after our toolchain's first error, later ones may be its consequences; before it, they are the file's
    header = Diagnostic("k.hip", 2, 10, "'hip/hip_bf16.h' file not found")
    own = Diagnostic("k.hip", 9, 3, "use of undeclared identifier 'acc_tile'")
    assert hip_builds.build_toolchain_limit(result([header, own]))
    assert hip_builds.build_toolchain_limit(result([own, header])) is None
    # an error inside one of our stand-in headers is ours, whatever it says
    standin = str(hip_gfx950.ROCM71_STANDINS / "hip" / "amd_detail" / "amd_hip_bf16.h")
    assert "our stand-in" in limit_at(standin, "no viable conversion from 'int2' to '__hip_bfloat16'")
    assert limit("no matching function for call to '__hmax2'") and limit("no matching function for call to 'f'") is None


def test_a_header_looked_for_in_the_runners_folders_is_not_the_files_error(tmp_path):
    """vyomakesh0728's v52: `-I/home/runner/aiter/csrc/include` (aiter's source tree on the runner) and
    `#include "opus/opus.hpp"`: the runner built it; here the folder does not exist, so NOT RUN naming it.
    With the folder present, a header it lacks is the file's error as before."""
    missing = Diagnostic("k.hip", 5, 10, "'opus/opus.hpp' file not found")
    runner_dir = "/home/runner/aiter/csrc/include"
    build = hip_gfx950.BuildResult(hip_gfx950.Source("k.hip", ""), False, [missing], [], 0.0,
                                   ["clang++", f"-I{runner_dir}", "-isystem", "/nowhere/else", "-I", str(tmp_path)],
                                   "test")
    assert hip_builds.absent_include_dirs(build.command) == [runner_dir, "/nowhere/else"]
    reason = hip_builds.build_toolchain_limit(build)
    assert reason and "opus/opus.hpp" in reason and runner_dir in reason
    assert hip_builds.build_toolchain_limit(result([missing])) is None  # no such folder named: the file's
    present = dataclasses.replace(build, command=["clang++", "-I", str(tmp_path)])
    assert hip_builds.build_toolchain_limit(present) is None


def test_a_name_our_rocm_pytorch_stand_ins_lack_is_not_checkable_not_the_file_s_error():
    """63_inline_hip.py-style `at::cuda::getCurrentHIPStream()`: our declaration-only ROCm-PyTorch headers may
    lack a name ROCm PyTorch has; the build is not checkable here, never a FAIL. An error of the file's before
    it stays the file's."""
    member = Diagnostic("k.hip", 9, 3, "no member named 'getCurrentHIPStream' in namespace 'at::cuda'")
    own = Diagnostic("k.hip", 5, 3, "use of undeclared identifier 'acc_tile'")
    assert "at::cuda::getCurrentHIPStream" in hip_builds.missing_rocm_torch_header(result([member]))
    assert hip_builds.missing_rocm_torch_header(result([own, member])) is None


def limit_at(file, message):
    return hip_builds.toolchain_limit(Diagnostic(file, 3, 10, message))


def test_built_a_rocm71_header_is_not_run_and_an_operand_mismatch_fails(toolchain):
    bf16 = hip_gfx950.Source("bf16.hip", "#include <hip/hip_runtime.h>\n#include <hip/hip_bf16.h>\n"
                             "__global__ void k(__hip_bfloat16* y, const float* x) "
                             "{ y[threadIdx.x] = __float2bfloat16(x[threadIdx.x]); }\n")
    built = hip_gfx950.build(bf16, toolchain=toolchain)
    assert built.ok, built.errors  # ROCm >= 6 has the header; packaged HIP 5.2 gets our stand-in
    if toolchain.standins:
        assert toolchain.standins_included(bf16.text) == ["hip/hip_bf16.h"]
        # what the stand-ins leave out is our toolchain's limit, never the file's error
        fp8 = hip_gfx950.Source("fp8.hip", "#include <hip/hip_runtime.h>\n#include <hip/hip_ext_ocp.h>\n"
                                "__global__ void k(__amd_fp8x2_storage_t* y, const float* x) { y[threadIdx.x] = "
                                "__amd_cvt_floatx2_to_fp8x2_scale(__amd_floatx2_storage_t{x[0], x[1]}, __AMD_OCP_E4M3, 0); }\n")
        built = hip_gfx950.build(fp8, toolchain=toolchain)
        assert not built.ok and "__amd_cvt_floatx2_to_fp8x2_scale" in hip_builds.build_toolchain_limit(built)
    mfma = hip_gfx950.Source("mfma.hip", """#include <hip/hip_runtime.h>
typedef int int4v __attribute__((ext_vector_type(4)));
typedef float float4v __attribute__((ext_vector_type(4)));
__global__ void k(const int4v* a, const int4v* b, float4v* c) {
  int4v x = a[threadIdx.x], y = b[threadIdx.x];
  c[threadIdx.x] = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(x, y, c[threadIdx.x], 4, 4, 0, 127, 0, 127);
}
""")
    built = hip_gfx950.build(mfma, toolchain=toolchain)
    assert not built.ok and built.errors[0].line == 6 and "int4v" in built.errors[0].message
    assert hip_builds.build_toolchain_limit(built) is None


# ---------------------------------------------------------------------------------------------------
# A fallback that hides HIP the runner runs (issue 39): the verdicts judged on the calls are NOT RUN


def _records(*verdicts, outcome="passed"):
    from fuzz.submission.plugin import VerdictRecord

    return {v: VerdictRecord(v, outcome=outcome) for v in verdicts}


NOT_RUN_HERE = {"load_inline(k) at f.py:3": "the CPU model of gfx950 does not have inline asm"}


def test_verdicts_on_a_fallback_are_not_run_with_their_own_result_kept():
    from fuzz.submission.plugin import mark_hip_fallback

    records = _records("loads", "official", "correctness", "builds_gfx950", "kernelguard")
    records["correctness"].outcome = "failed"
    note = mark_hip_fallback(records, {"hip_not_run": NOT_RUN_HERE, "hip_fallback_calls": 3}, [{"ok": True}])
    assert {v: r.status for v, r in records.items()} == {
        "loads": "PASS", "official": "NOT RUN", "correctness": "NOT RUN", "builds_gfx950": "PASS", "kernelguard": "PASS"}
    assert note.startswith("NOT RUN official, correctness")
    assert records["correctness"].line().startswith("its HIP did not run here") and "the fallback: FAIL" in records["correctness"].line()


def test_a_file_that_raises_on_the_model_s_error_code_is_not_run_not_failed():
    """HIPRTC's model returns the error code a real compile error gives when its host compiler refuses a
    source; a file without a fallback raises it. Its verdicts judge the model's refusal, not the runner's HIP."""
    from fuzz.submission.plugin import mark_hip_fallback

    records = _records("loads", "official", "correctness")
    records["official"].outcome = "failed"
    note = mark_hip_fallback(records, {"hip_not_run": NOT_RUN_HERE}, [])
    assert {v: r.status for v, r in records.items()} == {"loads": "PASS", "official": "NOT RUN", "correctness": "NOT RUN"}
    assert "went on without it" in records["official"].line() and note.startswith("NOT RUN official, correctness")
    # the same source not building for gfx950 either (the file's own error): the runner's HIPRTC refuses it too
    records = _records("official")
    records["official"].outcome = "failed"
    mark_hip_fallback(records, {"hip_not_run": NOT_RUN_HERE}, [{"ok": False, "not_checked": ""}])
    assert records["official"].status == "FAIL"


def test_a_build_our_toolchain_could_not_make_never_stands_for_the_runner_s_fallback():
    from fuzz.submission.plugin import mark_hip_fallback
    from fuzz.submission.report_text import build_lines

    records = _records("official", "correctness")
    ours = {"ok": False, "build": "load_inline('m') at line 9", "kernels": [],
            "not_checked": "our HIP toolchain (HIP 5.2 headers, clang-22) lacks hip/hip_bf16.h; the runner's ROCm 7.1 has it"}
    note = mark_hip_fallback(records, {"hip_not_run": NOT_RUN_HERE, "hip_fallback_calls": 3}, [ours])
    assert {r.status for r in records.values()} == {"NOT RUN"} and "either" not in note, note
    (line,) = build_lines(ours)
    assert "not built here" in line and "does not build" not in line
    assert build_lines({**ours, "not_checked": ""}) == ["gfx950      load_inline('m') at line 9: does not build"]


@pytest.mark.parametrize("notes, builds", [
    ({"hip_not_run": NOT_RUN_HERE, "hip_fallback_calls": 3}, [{"ok": False}]),  # no gfx950 build: the runner falls back too
    ({"hip_fallback_calls": 3}, []),  # everything the runner builds ran here
])
def test_verdicts_stand_where_the_runner_would_run_what_ran_here(notes, builds):
    from fuzz.submission.plugin import mark_hip_fallback

    records = _records("official", "correctness")
    mark_hip_fallback(records, notes, builds)
    assert {r.status for r in records.values()} == {"PASS"}


@pytest.mark.slow
def test_the_worker_records_hip_that_did_not_run_and_a_runner_identical_import_failure_apart():
    """hip_unrun_with_fallback.py: its inline asm is not modelled, its fallback serves: recorded as not run.
    load_inline_with_fallback.py: built, but its module has no functions, so importing it fails on the runner
    too: nothing recorded as not run (its fallback is what the runner runs)."""
    found = {}
    for name in ("hip_unrun_with_fallback.py", "load_inline_with_fallback.py"):
        runner = SubmissionRunner(EXAMPLES / name, aiter="emulated", timeout=120)
        try:
            ctx = checks.Context(runner, TIER)
            outcome = checks.check_contract(ctx, [Case(2, 64, 64, seed=1)])
            found[name] = (outcome.status, dict(runner.tier_notes.get("hip_not_run") or {}),
                           runner.tier_notes.get("hip_fallback_calls", 0))
        finally:
            runner.close()
    status, not_run, calls = found["hip_unrun_with_fallback.py"]
    assert status == "pass" and calls >= 1 and len(not_run) == 1, found
    (what, why), = not_run.items()
    assert what.startswith("load_inline(mxfp4_unrun_with_fallback) at ") and "hip_unrun_with_fallback.py:" in what
    assert ("inline asm" in why or "no ROCm" in why or "clang" in why), why
    assert found["load_inline_with_fallback.py"][:2] == ("pass", {}), found


def test_an_aiter_module_the_emulation_lacks_and_the_file_catches_marks_its_verdicts_not_run():
    """kernelsanders #100: ``try: from aiter.ops.triton.gluon.gemm_afp4wfp4 import ...`` (real aiter at the runner's
    commit has it) ``except Exception:`` a fallback. It was P/P/P here on the fallback alone; the verdicts on its
    calls are NOT RUN, and a failing gfx950 build of other HIP does not mean the runner falls back from aiter."""
    from fuzz.submission.plugin import mark_hip_fallback

    notes = {"aiter_not_run": {"aiter.ops.triton.gluon": "the emulation does not have it"}, "hip_fallback_calls": 3}
    records = _records("loads", "official", "correctness")
    note = mark_hip_fallback(records, notes, [{"ok": False}])
    assert {v: r.status for v, r in records.items()} == {"loads": "PASS", "official": "NOT RUN", "correctness": "NOT RUN"}
    assert "aiter code the runner has did not run here" in records["official"].line() and "aiter code" in note


@pytest.mark.slow
def test_the_worker_records_a_real_aiter_module_the_emulation_lacks(tmp_path):
    path = tmp_path / "gluon_or_fallback.py"
    path.write_text("try:\n    from aiter.ops.triton.gluon.gemm_afp4wfp4 import gemm_afp4wfp4\n"
                    "except Exception:\n    gemm_afp4wfp4 = None\n\n\n"
                    "def custom_kernel(data):\n    import torch\n    A, B = data[0], data[1]\n"
                    "    return (A.float() @ B.float().T).to(torch.bfloat16)\n")
    runner = SubmissionRunner(path, aiter="emulated", timeout=120)
    try:
        checks.check_contract(checks.Context(runner, TIER), [Case(2, 64, 64, seed=1)])
        not_run = dict(runner.tier_notes.get("aiter_not_run") or {})
    finally:
        runner.close()
    # the module is emulated for its reduce kernel only: the real name the file asked for is what is recorded
    assert list(not_run) == ["aiter.ops.triton.gluon.gemm_afp4wfp4.gemm_afp4wfp4"]
    assert runner.tier_notes.get("hip_fallback_calls", 0) >= 1
