"""builds_gfx950 fails only for errors the runner's ROCm 7.1 would report (fuzz/submission/hip_builds.py,
``build_toolchain_limit``): a HIP header ROCm 7.1 has and our packaged HIP 5.2 lacks, a name its headers
declare, or a device-link failure of our toolchain is NOT RUN naming what is missing; the file's own
compile errors (a wrong MFMA operand type, an undefined device function of its own) stay FAIL."""
from __future__ import annotations

import pytest

from fuzz.codegen import hip_gfx950
from fuzz.codegen.hip_gfx950 import Diagnostic
from fuzz.submission import hip_builds

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


@pytest.fixture(scope="module")
def toolchain():
    found, reason = hip_gfx950.find_toolchain()
    if found is None:
        pytest.skip(f"no HIP compiler for gfx950 here: {reason}")
    return found


def test_built_a_rocm71_header_is_not_run_and_an_operand_mismatch_fails(toolchain):
    bf16 = hip_gfx950.Source("bf16.hip", "#include <hip/hip_runtime.h>\n#include <hip/hip_bf16.h>\n"
                             "__global__ void k(__hip_bfloat16* y, const float* x) "
                             "{ y[threadIdx.x] = __float2bfloat16(x[threadIdx.x]); }\n")
    built = hip_gfx950.build(bf16, toolchain=toolchain)
    if built.ok:
        pytest.skip("these HIP headers have hip/hip_bf16.h (ROCm >= 6): nothing is missing")
    assert "lacks hip/hip_bf16.h; the runner's ROCm 7.1 has it" in hip_builds.build_toolchain_limit(built)
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
