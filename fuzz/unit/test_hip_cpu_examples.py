"""The HIP MFMA GEMM examples (fuzz/examples/hip_mfma_gemm*.py) run on the CPU model of gfx950 through
their own ``hipcc`` + ``ctypes`` code: no_rocm routes the hipcc command to the model, the file loads the
library it built, and the oracle judges what its kernel computed. The correct one passes; each twin fails
where its bug is, and only there. (The worker path, report and verdicts: test_submission_examples.py.)"""
import sys
from pathlib import Path

import pytest

from fuzz.judge.oracle import check_product
from fuzz.search.strategies import Case
from reference.emulation import no_rocm
from reference.emulation.hip_cpu import build

pytestmark = pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

SMALL = Case(40, 208, 320, seed=1)  # M, N tails; K % 256 = 64
WHOLE_K = Case(33, 144, 512, seed=2)  # K a multiple of 256: a dropped K tail cannot show
# twin -> (fails on SMALL, fails on WHOLE_K)
TWINS = {"": (False, False), "B_HALF_SWAP=1": (True, True), "K_STEP_WHOLE=256": (True, False),
         "BARRIER_AFTER_LDS=0": (True, True)}


@pytest.fixture(scope="module")
def example():
    installed_here = not no_rocm.installed()
    no_rocm.install()
    sys.path.insert(0, str(EXAMPLES))
    try:
        import hip_mfma_gemm

        yield hip_mfma_gemm
    finally:
        sys.path.remove(str(EXAMPLES))
        if installed_here:
            no_rocm.uninstall()


@pytest.mark.parametrize("define", sorted(TWINS))
def test_each_twin_fails_where_its_bug_is(example, define):
    library = example.build([define] if define else [])
    built = [a for a in no_rocm.attempts() if a.api == "subprocess"]
    assert built and built[-1].cpu_model == "built", built[-1:]
    for case, should_fail in zip((SMALL, WHOLE_K), TWINS[define]):
        data, _ = case.build()
        before = no_rocm.hip_cpu_launches()
        verdict = check_product(example.gemm(library, data), data)
        assert no_rocm.hip_cpu_launches() > before, "the HIP kernel served the call"
        assert verdict.passed != should_fail, (define, case.describe(), verdict.summary)


def test_an_unmodelled_builtin_is_refused_by_name(tmp_path):
    source = tmp_path / "k.hip"
    source.write_text("#include <hip/hip_runtime.h>\n__global__ void k(int* x) { x[0] = __builtin_amdgcn_s_getpc(); }\n")
    with pytest.raises(build.NotModelled, match="__builtin_amdgcn_s_getpc"):
        build.compile_shared([source.read_text()], tmp_path / "k.so")
    with pytest.raises(build.NotModelled, match="inline asm"):
        build.compile_shared(['__global__ void k() { asm volatile("s_nop 0"); }'], tmp_path / "k.so")


def test_launch_syntax_is_translated():
    text = "k<T, 4><<<dim3(g, 1), 256, 0, stream>>>(a, b);\nplain<<<1, 64>>>();\n"
    out = build.translate(text)
    assert "hipLaunchKernelGGL((k<T, 4>), dim3(g, 1), 256, 0, stream, a, b);" in out
    assert "hipLaunchKernelGGL((plain), 1, 64, 0, 0);" in out
    assert "float* smem = (float*)::hipcpu::dynamic_shared();" in build.translate("extern __shared__ float smem[];")
