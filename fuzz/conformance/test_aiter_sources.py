"""Conformance with aiter's own Triton sources: the emulated kernels against aiter's, bit for bit.

``pytest fuzz -m conformance --aiter-source PATH`` (PATH: an aiter checkout, e.g. at the competition commit
bd02afb526) loads aiter's real ``@triton.jit`` kernels from their files and runs them in this tier's
Triton (on a CPU the patched interpreter, which also passes every launch through the compiled frontend
for gfx950), beside the emulation's. Both are launched by the emulation's wrappers with the same
arguments (the wrapper's kernel global is swapped), so any difference is in the kernel bodies. Without
``--aiter-source`` every test skips. No GPU and no installed aiter are needed.

Only the kernel files are loaded (aiter's package imports its HIP/JIT runtime): their ``aiter.*`` imports
are served by the other loaded kernel files, and ``get_gemm_config`` by a stub the kernels never call.
"""
from __future__ import annotations

import ast
import contextlib
import importlib.util
import pathlib
import sys
import types

import numpy as np
import pytest
import torch
import triton

from fuzz.testing.fixtures_aiter import emulated, preshuffled_views, unshuffled_b
from kernels.platform import detect
from fuzz.search.strategies import Case
from reference import generate_input
from reference.oracle.layouts import e8m0_unshuffle

pytestmark = [pytest.mark.conformance,
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # NaN/Inf patterns reach numpy

DEVICE = detect().device
KERNELS = "aiter/ops/triton/_triton_kernels"
SOURCES = {  # module name aiter imports it by -> file in the checkout
    "aiter.ops.triton.utils._triton.kernel_repr": "aiter/ops/triton/utils/_triton/kernel_repr.py",
    "aiter.ops.triton.utils._triton.pid_preprocessing": "aiter/ops/triton/utils/_triton/pid_preprocessing.py",
    "aiter.ops.triton._triton_kernels.quant.quant": f"{KERNELS}/quant/quant.py",
    "aiter.ops.triton._triton_kernels.gemm.basic.gemm_a16wfp4": f"{KERNELS}/gemm/basic/gemm_a16wfp4.py",
    "aiter.ops.triton._triton_kernels.gemm.basic.gemm_afp4wfp4": f"{KERNELS}/gemm/basic/gemm_afp4wfp4.py",
}


@contextlib.contextmanager
def _aiter_names(modules: dict):
    """``modules`` importable under their aiter names (parents as empty packages) for the duration only,
    whatever ``aiter`` is selected in this process."""
    saved = {name: mod for name, mod in sys.modules.items() if name == "aiter" or name.startswith("aiter.")}
    for name in saved:
        del sys.modules[name]
    try:
        for name in modules:
            parts = name.split(".")
            for i in range(1, len(parts)):
                sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
        sys.modules.update(modules)
        yield
    finally:
        for name in [n for n in sys.modules if n == "aiter" or n.startswith("aiter.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def load_aiter_kernels(root: pathlib.Path) -> dict:
    """aiter's kernel modules from the checkout at ``root``: aiter name -> module (named aiter_source.*)."""
    config_utils = types.ModuleType("aiter.ops.triton.utils.gemm_config_utils")

    def get_gemm_config(*args, **kwargs):
        raise NotImplementedError("aiter's configs are not loaded; the emulation's wrappers choose them")

    config_utils.get_gemm_config = get_gemm_config
    loaded = {"aiter.ops.triton.utils.gemm_config_utils": config_utils}
    for name, relative in SOURCES.items():
        spec = importlib.util.spec_from_file_location(name.replace("aiter.", "aiter_source.", 1), root / relative)
        module = importlib.util.module_from_spec(spec)
        with _aiter_names(loaded):
            spec.loader.exec_module(module)
        loaded[name] = module
    return loaded


def wrapper_get_splitk(root: pathlib.Path):
    """``get_splitk`` of aiter's wrapper module ``gemm/basic/gemm_afp4wfp4.py`` (with the final recount),
    taken out of the file alone: the module itself imports aiter's runtime."""
    tree = ast.parse((root / "aiter/ops/triton/gemm/basic/gemm_afp4wfp4.py").read_text())
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_splitk")
    namespace = {"triton": triton}
    exec(compile(ast.Module(body=[function], type_ignores=[]), "gemm_afp4wfp4.py", "exec"), namespace)
    return namespace["get_splitk"]


@pytest.fixture(scope="module")
def aiter_source(pytestconfig) -> pathlib.Path:
    path = pytestconfig.getoption("--aiter-source")
    if not path:
        pytest.skip("needs --aiter-source PATH (an aiter checkout, e.g. at bd02afb526)")
    root = pathlib.Path(path)
    missing = [r for r in SOURCES.values() if not (root / r).is_file()]
    if missing:
        pytest.skip(f"--aiter-source {root} lacks {missing[0]} (not a checkout of the competition-era layout)")
    return root


@pytest.fixture(scope="module")
def real(aiter_source):
    return load_aiter_kernels(aiter_source)


@contextlib.contextmanager
def aiters_kernels(real: dict, swaps: list):
    """The emulation's wrappers launching aiter's kernels: swaps = [(wrapper module, global, aiter module)]."""
    saved = [(wrapper, name, getattr(wrapper, name)) for wrapper, name, _ in swaps]
    for wrapper, name, module in swaps:
        setattr(wrapper, name, getattr(real[module], name))
    try:
        yield
    finally:
        for wrapper, name, value in saved:
            setattr(wrapper, name, value)


def both(real, swaps, call):
    """(aiter's kernels' result, the emulation's) of ``call()``."""
    with aiters_kernels(real, swaps):
        theirs = call()
    return theirs, call()


def assert_identical(theirs, ours, what):
    for a, b in zip(theirs if isinstance(theirs, tuple) else (theirs,), ours if isinstance(ours, tuple) else (ours,)):
        assert a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype, what
        assert torch.equal(a.view(torch.uint8) if a.dtype != torch.uint8 else a,
                           b.view(torch.uint8) if b.dtype != torch.uint8 else b), what


def bf16(bits) -> torch.Tensor:
    return torch.from_numpy(np.asarray(bits, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)


QUANT = "aiter.ops.triton._triton_kernels.quant.quant"
A16WFP4 = "aiter.ops.triton._triton_kernels.gemm.basic.gemm_a16wfp4"
AFP4WFP4 = "aiter.ops.triton._triton_kernels.gemm.basic.gemm_afp4wfp4"


def gemm_swaps():
    """Every GEMM kernel global of the emulation's wrappers, paired with aiter's kernel module."""
    a16, afp4 = emulated("ops.triton.gemm.basic.gemm_a16wfp4"), emulated("ops.triton.gemm.basic.gemm_afp4wfp4")
    return [(a16, "_gemm_a16wfp4_kernel", A16WFP4), (a16, "_gemm_a16wfp4_preshuffle_kernel", A16WFP4),
            (afp4, "_gemm_afp4wfp4_kernel", AFP4WFP4), (afp4, "_gemm_afp4wfp4_reduce_kernel", AFP4WFP4)]


def test_dynamic_mxfp4_quant_kernel_is_aiters(real):
    wrapper = emulated("ops.triton.quant.quant")
    every_pattern = bf16(np.random.default_rng(2).permutation(65536)).reshape(512, 128)  # NaN payloads too
    subnormal_groups = bf16(np.arange(1, 2049) % 0x200).reshape(32, 64)  # scale byte 0: tl.exp2(127)
    all_nan = bf16(np.resize([0x7FC0, 0xFFFF, 0x7F81, 0x7FE0], 4 * 64)).reshape(4, 64)
    g = torch.Generator().manual_seed(0)
    inputs = [every_pattern, subnormal_groups, all_nan] + [
        (torch.randn(m, n, generator=g) * 3).to(torch.bfloat16) for m, n in [(1, 64), (3, 68), (33, 256),
                                                                              (40, 2048), (2, 4)]]
    for x in inputs:
        x = x.to(DEVICE)
        theirs, ours = both(real, [(wrapper, "_dynamic_mxfp4_quant_kernel", QUANT)],
                            lambda: wrapper.dynamic_mxfp4_quant(x))
        assert_identical(theirs, ours, f"dynamic_mxfp4_quant on {tuple(x.shape)}")


def config(**overrides):
    return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 256, "GROUP_SIZE_M": 1, "num_warps": 4,
            "num_stages": 1, "waves_per_eu": 1, "matrix_instr_nonkdim": 16, "cache_modifier": ".cg",
            "NUM_KSPLIT": 1, **overrides}


GEMM_CASES = [  # (m, n, k, config): one tile, two scale-shuffle chunks per K block, tails in M and N,
    (4, 64, 512, config()),  # grouped tiles, split-K (reduced and not)
    (4, 64, 1024, config(BLOCK_SIZE_K=512)),
    (13, 96, 512, config(BLOCK_SIZE_N=32)),
    (40, 192, 256, config(BLOCK_SIZE_N=32, GROUP_SIZE_M=2)),
    (16, 128, 1024, config(NUM_KSPLIT=4)),
]


@pytest.mark.parametrize("m, n, k, cfg", GEMM_CASES, ids=lambda v: str(v) if not isinstance(v, dict) else "")
def test_a16wfp4_kernels_are_aiters(real, m, n, k, cfg):
    wrapper = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
    data = generate_input(m, n, k, seed=m * n + k, device=DEVICE)
    b, b_scales = unshuffled_b(data)
    views = preshuffled_views(data)
    calls = {
        "gemm_a16wfp4": lambda: wrapper.gemm_a16wfp4(data[0], b, b_scales, config=cfg),
        "gemm_a16wfp4_preshuffle": lambda: wrapper.gemm_a16wfp4_preshuffle(data[0], *views, config=cfg),
        "partials": lambda: wrapper.gemm_a16wfp4_preshuffle(data[0], *views, config=cfg, skip_reduce=True),
    }
    for what, call in calls.items():
        theirs, ours = both(real, gemm_swaps(), call)
        assert_identical(theirs, ours, what)


def test_a16wfp4_kernel_k_tail_is_aiters(real):
    # K = 320 is no whole number of BLOCK_SIZE_K = 256: EVEN_K is false, the masked loads run
    wrapper = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
    data = generate_input(5, 64, 320, seed=3, device=DEVICE)
    b, b_scales = unshuffled_b(data)
    theirs, ours = both(real, gemm_swaps(), lambda: wrapper.gemm_a16wfp4(data[0], b, b_scales, config=config()))
    assert_identical(theirs, ours, "gemm_a16wfp4 with a K tail")


def test_a16wfp4_k_tail_reading_scale_padding_is_aiters(real):
    """K = 1600 (50 scale groups) with the scales passed as the padded (N, 56) unshuffle of B_scale_sh, its
    padding bytes 0xFF: the K-tail block reads groups 50-55, a NaN scale times the masked zeros. aiter's kernel
    gives NaN everywhere, and so does the emulation: a real file's NaN there is aiter's (latent: no official
    K has a tail), not our stand-in's."""
    wrapper = emulated("ops.triton.gemm.basic.gemm_a16wfp4")
    data, _ = Case(1, 64, 1600, seed=5, scale_pad_fill=0xFF).build(DEVICE)
    _, _, b_q, _, b_scale_sh = data
    padded = e8m0_unshuffle(b_scale_sh, b_scale_sh.shape[0], b_scale_sh.shape[1]).view(torch.uint8)[:64]
    theirs, ours = both(real, gemm_swaps(), lambda: wrapper.gemm_a16wfp4(data[0], b_q.view(torch.uint8), padded,
                                                                        config=config(BLOCK_SIZE_K=512)))
    assert_identical(theirs, ours, "gemm_a16wfp4 reading 0xFF scale padding in its K tail")
    assert torch.isnan(ours.float()).all()


@pytest.mark.parametrize("m, n, k, cfg", GEMM_CASES + [(5, 64, 320, config(BLOCK_SIZE_K=128))],
                         ids=lambda v: str(v) if not isinstance(v, dict) else "")
def test_afp4wfp4_kernels_are_aiters(real, m, n, k, cfg):
    wrapper = emulated("ops.triton.gemm.basic.gemm_afp4wfp4")
    quant = emulated("ops.triton.quant")
    data = generate_input(m, n, k, seed=m + n * k, device=DEVICE)
    b, b_scales = unshuffled_b(data)
    a, a_scales = quant.dynamic_mxfp4_quant(data[0])
    for skip_reduce in (False, True):
        theirs, ours = both(real, gemm_swaps(), lambda: wrapper.gemm_afp4wfp4(
            a, b, a_scales, b_scales, config=cfg, skip_reduce=skip_reduce))
        assert_identical(theirs, ours, f"gemm_afp4wfp4 skip_reduce={skip_reduce}")


def test_get_splitk_is_aiters(real, aiter_source):
    kernel_module = emulated("ops.triton._triton_kernels.gemm.basic.gemm_a16wfp4")
    wrapper = emulated("ops.triton.gemm.basic.gemm_afp4wfp4")
    theirs_wrapper = wrapper_get_splitk(aiter_source)
    for k_bytes in list(range(16, 4097, 16)) + [3584, 7168 // 2, 1536 // 2, 2048 // 2]:
        for block_k in (64, 128, 256, 512, 1024):
            for splits in (1, 2, 3, 4, 7, 8, 14, 16):
                args = (k_bytes, block_k, splits)
                assert kernel_module.get_splitk(*args) == real[A16WFP4].get_splitk(*args), args
                assert wrapper.get_splitk(*args) == theirs_wrapper(*args), args


def test_the_emulations_list_of_real_module_names_is_the_checkouts(aiter_source):
    """The [module_names] the emulation's surface list holds are what aiter's source at the checkout binds at
    the top of each module the emulation has (reference/emulation/aiter_surface.py writes them)."""
    from reference.emulation import aiter_surface

    committed = aiter_surface.EMULATION / "aiter" / "surface_f3be04a12a0c.txt"
    text = committed.read_text(encoding="utf-8").split(f"\n{aiter_surface.SECTION}\n", 1)[1]
    listed = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert listed == aiter_surface.section_lines(aiter_source)
