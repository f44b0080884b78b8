"""The split-K fold (kernels.fold): native (g++ grid emulation) and Triton vs an in-order fp32 torch sum."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import struct
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import kernels  # noqa: F401  (Triton mode before any kernel import)
from kernels import fold, platform
from kernels.fold import native

CANONICAL_NAN = 0x7FC0
SPLITS = (1, 2, 3, 7, 14)
BACKENDS = ("native", "triton")


def device_for(backend: str) -> str:
    """native tests use the CPU build (g++ + grid emulator) everywhere; Triton runs where it can: the
    interpreter on CPU machines, the GPU elsewhere."""
    return "cpu" if backend == "native" else platform.detect().device


def f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def expected_bits(partials: torch.Tensor) -> torch.Tensor:
    """In-order fp32 sum, torch's RNE bf16 cast, every NaN -> 0x7FC0; as int16 bits."""
    acc = partials[0].clone()
    for s in range(1, partials.shape[0]):
        acc += partials[s]
    bits = acc.to(torch.bfloat16).view(torch.int16).clone()
    bits[torch.isnan(acc)] = CANONICAL_NAN
    return bits


def as_u16(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).cpu().numpy().view(np.uint16)


def assert_bits_equal(got: torch.Tensor, want_bits: torch.Tensor) -> None:
    g, w = as_u16(got), want_bits.numpy().view(np.uint16)
    bad = np.flatnonzero(g.ravel() != w.ravel())
    assert bad.size == 0, (
        f"{bad.size} of {g.size} elements differ; first at flat index {bad[0]}: "
        f"got 0x{g.ravel()[bad[0]]:04x}, want 0x{w.ravel()[bad[0]]:04x}"
    )


def partials_view(values: torch.Tensor, slice_stride: int, offset: int, device: str = "cpu") -> torch.Tensor:
    """[S, M, N] view of ``values`` whose slices sit ``slice_stride`` floats apart, ``offset`` floats into a
    NaN-filled buffer, so reading padding or the wrong slice shows up as NaN."""
    S, M, N = values.shape
    buf = torch.full((offset + (S - 1) * slice_stride + M * N + 8,), float("nan"), device=device)
    view = buf.as_strided((S, M, N), (slice_stride, N, 1), offset)
    view.copy_(values)
    return view


def guarded_out(M: int, N: int, offset: int, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """A contiguous bf16 [M, N] ``out`` ``offset`` elements into a sentinel-filled buffer (for a guard check)."""
    buf = torch.full((offset + M * N + 8,), 12345.0, dtype=torch.bfloat16, device=device)
    return buf, buf[offset : offset + M * N].view(M, N)


def random_values(rng: np.random.Generator, S: int, M: int, N: int, special_frac: float) -> torch.Tensor:
    mags = np.exp2(rng.integers(-30, 31, size=(S, M, N))).astype(np.float32)
    vals = (rng.standard_normal((S, M, N)).astype(np.float32) * mags).astype(np.float32)
    specials = np.array(
        [np.nan, np.inf, -np.inf, 3.0e38, -3.0e38, f32(0x7F7F8000), f32(0x00000001), f32(0x80018000), -0.0,
         f32(0x3F808000), f32(0x7F800001), f32(0xFFFFFFFF)],
        dtype=np.float32,
    )
    hit = rng.random((S, M, N)) < special_frac
    vals[hit] = rng.choice(specials, size=int(hit.sum()))
    return torch.from_numpy(vals)


@pytest.fixture(scope="module")
def cpu_lib() -> native.NativeFold:
    ok, reason = fold.native_available("cpu")
    if not ok:
        pytest.skip(f"native CPU fold unavailable: {reason}")
    return native.load("cpu")


def run_case(backend: str, S: int, M: int, N: int, seed: int, pad: int, p_off: int, o_off: int, special: float):
    rng = np.random.default_rng(seed)
    values = random_values(rng, S, M, N, special)
    dev = device_for(backend)
    P = partials_view(values, M * N + pad, p_off, dev)
    buf, out = guarded_out(M, N, o_off, dev)
    guard_before = buf.clone()
    got = fold.fold_partials(P, out, backend=backend)
    assert got is out
    assert_bits_equal(out, expected_bits(values))
    inside = torch.zeros(buf.shape, dtype=torch.bool, device=dev)
    inside[o_off : o_off + M * N] = True
    assert torch.equal(buf[~inside].view(torch.int16), guard_before[~inside].view(torch.int16)), "wrote outside out"


case_args = dict(
    S=st.sampled_from(SPLITS),
    M=st.integers(1, 24),
    N=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    pad=st.sampled_from([0, 1, 3, 4]),
    p_off=st.sampled_from([0, 0, 1, 4]),
    o_off=st.sampled_from([0, 0, 1, 4]),
    special=st.sampled_from([0.0, 0.02, 0.3]),
)


@settings(max_examples=150, deadline=None)
@given(**case_args)
def test_native_matches_reference(cpu_lib, S, M, N, seed, pad, p_off, o_off, special):
    run_case("native", S, M, N, seed, pad, p_off, o_off, special)


@settings(max_examples=30, deadline=None)
@given(**case_args)
def test_triton_matches_reference(S, M, N, seed, pad, p_off, o_off, special):
    run_case("triton", S, M, N, seed, pad, p_off, o_off, special)


def tie_values(rng: np.random.Generator, S: int, count: int) -> torch.Tensor:
    """Partials whose in-order fp32 sums are exactly halfway between two bf16 values.

    A tie t = k * 2^(e-23) with k a 24-bit integer ending in 0x80 (binary ...1000 0000 of the low 8 of 16 bits
    that bf16 drops); the k is split into S non-negative integer parts, so every partial sum is an integer
    below 2^24 times the same power of two and hence exact in fp32.
    """
    hi = rng.integers(0x80, 0x100, size=count)  # the 8 mantissa bits bf16 keeps (with the implicit 1)
    k = (hi << 16) | 0x8000
    e = rng.integers(-40, 40, size=count)
    cuts = np.sort(rng.integers(0, k[None, :] + 1, size=(S - 1, count)), axis=0)
    parts = np.diff(np.concatenate([np.zeros((1, count), np.int64), cuts, k[None, :]]), axis=0)
    sign = np.where(rng.random(count) < 0.5, -1.0, 1.0)
    vals = (parts * np.exp2(e - 23.0) * sign).astype(np.float32)
    return torch.from_numpy(vals).reshape(S, 1, count)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("S", SPLITS)
def test_ties_round_to_even(backend, S, request):
    if backend == "native":
        request.getfixturevalue("cpu_lib")
    P = tie_values(np.random.default_rng(S), S, 203)
    acc = P.sum(0, dtype=torch.float64).to(torch.float32)  # exact: no rounding happens anywhere
    assert bool(((acc.view(torch.int32) & 0xFFFF) == 0x8000).all()), "construction must give exact ties"
    y = fold.fold_partials(P.to(device_for(backend)), backend=backend)
    got = as_u16(y).astype(np.int64)
    down = (acc.view(torch.int32).numpy().astype(np.int64) >> 16) & 0xFFFF
    assert set(np.unique(got - down)) <= {0, 1}, "a tie must round to one of its two neighbours"
    assert not (got & 1).any(), "ties must round to the even neighbour"
    assert ((got - down) == 1).any() and ((got - down) == 0).any(), "both tie directions should occur"
    assert_bits_equal(y, expected_bits(P))


# (fp32 bit patterns of one column of partials, expected bf16 bits)
SPECIAL_CASES = [
    ([0x7F800001], CANONICAL_NAN),  # the bare carry trick gives 0x7F80 (Inf)
    ([0xFFFFFFFF], CANONICAL_NAN),  # the bare carry trick wraps to 0x0000
    ([0xFFC12345], CANONICAL_NAN),
    ([0x7F800000, 0xFF800000], CANONICAL_NAN),  # Inf + -Inf
    ([0x3F800000, 0x7FC00000, 0x3F800000], CANONICAL_NAN),
    ([0x7F800000, 0x3F800000], 0x7F80),
    ([0xFF800000], 0xFF80),
    ([0x7F7FFFFF], 0x7F80),  # fp32 max rounds up past the bf16 max
    ([0x7F7F8000], 0x7F80),  # tie at the bf16 max: 0x7F7F is odd, so to even = Inf
    ([0xFF7F8000], 0xFF80),
    ([0x7F7F7FFF], 0x7F7F),  # just below that tie
    ([0x7F000000, 0x7F000000, 0x7F000000], 0x7F80),  # fp32 overflow in the sum itself
    ([0x80000000], 0x8000),  # S = 1 keeps -0.0
    ([0x80000000, 0x00000000], 0x0000),  # -0 + +0 = +0
    ([0x00008000], 0x0000),  # denormal tie, even neighbour below
    ([0x00018000], 0x0002),  # denormal tie, even neighbour above
    ([0x00000001, 0x00000001], 0x0000),  # denormal sum, not flushed, rounds to 0
    ([0x00400000, 0x00400000], 0x0080),  # two denormals add up to the smallest normal
    ([0x3F800000, 0x3B800000], 0x3F80),  # 1 + 2^-8: tie, 0x3F80 even
    ([0x3F810000, 0x3B800000], 0x3F82),  # (1 + 2^-7) + 2^-8: tie, rounds up to even
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_special_values(backend, request):
    if backend == "native":
        request.getfixturevalue("cpu_lib")
    for column, want in SPECIAL_CASES:
        P = torch.tensor([f32(b) for b in column], dtype=torch.float32, device=device_for(backend))
        P = P.reshape(len(column), 1, 1)
        got = int(as_u16(fold.fold_partials(P, backend=backend))[0, 0])
        assert got == want, f"{[hex(b) for b in column]}: got 0x{got:04x}, want 0x{want:04x}"


@pytest.mark.parametrize(
    "S,M,N,pad,path,load16,load4,store8,store2",
    [
        # aligned, M*N % 4 == 0: pure vector path
        (3, 8, 12, 0, "vector", 3 * 24, 0, 24, 0),
        # M*N % 4 == 3 with slices padded to a multiple of 4: vector bulk plus a scalar tail of 3
        (7, 5, 7, 1, "vector", 7 * 8, 7 * 3, 8, 3),
        # S == 1 needs no slice alignment
        (1, 3, 5, 0, "vector", 3, 3, 3, 3),
        # M*N % 4 != 0 and unpadded: slice 1 starts misaligned, so everything goes scalar
        (2, 3, 5, 0, "scalar", 0, 2 * 15, 0, 15),
    ],
)
@pytest.mark.parametrize("max_blocks", [0, 1])
def test_native_path_covers_every_element(cpu_lib, S, M, N, pad, path, load16, load4, store8, store2, max_blocks):
    values = random_values(np.random.default_rng(7), S, M, N, 0.0)
    P = partials_view(values, M * N + pad, 0)
    out = torch.empty(M, N, dtype=torch.bfloat16)
    assert cpu_lib.pick_path(P, out) == path
    cpu_lib.launch(P, out, max_blocks=max_blocks)
    c = cpu_lib.counters()
    assert (c["load16"], c["load4"], c["store8"], c["store2"], c["other"]) == (load16, load4, store8, store2, 0)
    assert_bits_equal(out, expected_bits(values))


def test_grid_stride_loop_with_few_blocks(cpu_lib):
    # 3 blocks of 256 threads for 5000 elements: each thread folds several groups.
    values = random_values(np.random.default_rng(3), 2, 50, 100, 0.01)
    P = partials_view(values, 5000, 0)
    out = torch.empty(50, 100, dtype=torch.bfloat16)
    cpu_lib.launch(P, out, path="vector", max_blocks=3)
    assert cpu_lib.counters()["store8"] == 1250
    assert_bits_equal(out, expected_bits(values))


def test_misaligned_vector_access_faults(cpu_lib):
    values = random_values(np.random.default_rng(5), 2, 4, 8, 0.0)
    P_bad = partials_view(values, 32, 1)  # base 4 bytes past a 16-byte boundary
    out = torch.empty(4, 8, dtype=torch.bfloat16)
    assert P_bad.data_ptr() % 16 == 4 and out.data_ptr() % 16 == 0
    assert cpu_lib.pick_path(P_bad, out) == "scalar"
    with pytest.raises(native.FoldFault, match=r"misaligned 16-byte load .*address % 16 = 4") as err:
        cpu_lib.launch(P_bad, out, path="vector")
    assert err.value.code == 716

    # The public API takes the scalar path for the same buffers and gets the right answer.
    assert_bits_equal(fold.fold_partials(P_bad, out, backend="native"), expected_bits(values))

    _, out_bad = guarded_out(4, 8, 1)  # 2 bytes past an 8-byte boundary
    P_ok = partials_view(values, 32, 0)
    with pytest.raises(native.FoldFault, match=r"misaligned 8-byte store .*address % 8 = 2"):
        cpu_lib.launch(P_ok, out_bad, path="vector")
    assert_bits_equal(fold.fold_partials(P_ok, out_bad, backend="native"), expected_bits(values))


def test_out_of_bounds_and_read_only_faults(cpu_lib):
    lib = cpu_lib.lib
    P = torch.zeros(64)
    out = torch.zeros(64, dtype=torch.bfloat16)

    def launch(n: int, out_writable: int) -> int:
        lib.hip_cpu_clear_regions()
        lib.hip_cpu_add_region(P.data_ptr(), 32 * 4, 0)  # only the first 32 floats are the fold's
        lib.hip_cpu_add_region(out.data_ptr(), 32 * 2, out_writable)
        return lib.fold_launch(P.data_ptr(), out.data_ptr(), n, n, 1, native.PATH_AUTO, 0, None)

    assert launch(32, 1) == 0
    assert launch(36, 1) == 700
    assert re.match(r"out-of-bounds 16-byte load", lib.fold_last_error().decode())
    assert launch(32, 0) == 700
    assert re.match(r"read-only 8-byte store", lib.fold_last_error().decode())
    lib.hip_cpu_clear_regions()


def test_bad_launch_arguments_are_refused(cpu_lib):
    P = torch.zeros(2, 4, 4)
    out = torch.empty(4, 4, dtype=torch.bfloat16)
    # slice stride 8 < n = 16 would make the slices overlap
    assert cpu_lib.lib.fold_launch(P.data_ptr(), out.data_ptr(), 16, 8, 2, 0, 0, None) == -1
    assert "bad arguments" in cpu_lib.lib.fold_last_error().decode()


def _bad_inputs():
    p = torch.zeros(2, 4, 8)
    o = torch.empty(4, 8, dtype=torch.bfloat16)
    return [
        ("not a tensor", [[1.0]], None, TypeError, "must be a torch.Tensor"),
        ("fp16 partials", p.half(), None, TypeError, "must be float32"),
        ("2-D partials", p[0], None, ValueError, r"3-D \[S, M, N\]"),
        ("no splits", p[:0], None, ValueError, "at least one split"),
        ("transposed slices", p.transpose(1, 2), None, ValueError, "contiguous"),
        ("overlapping slices", p.as_strided((2, 4, 8), (16, 8, 1)), None, ValueError, "stride"),
        ("fp32 out", p, o.float(), TypeError, "must be bfloat16"),
        ("out shape", p, o.view(8, 4), ValueError, r"shape \(4, 8\)"),
        ("out strided", p, torch.empty(8, 4, dtype=torch.bfloat16).t(), ValueError, "out must be contiguous"),
        ("out list", p, [0], TypeError, "out must be a torch.Tensor"),
    ]


@pytest.mark.parametrize("name,partials,out,exc,msg", _bad_inputs(), ids=[c[0] for c in _bad_inputs()])
def test_input_validation(name, partials, out, exc, msg):
    with pytest.raises(exc, match=msg):
        fold.fold_partials(partials, out)


def test_out_overlapping_partials_and_bad_backend_are_refused():
    buf = torch.zeros(64)
    P = buf[:32].view(1, 4, 8)
    with pytest.raises(ValueError, match="overlaps"):
        fold.fold_partials(P, buf.view(torch.bfloat16)[:32].view(4, 8))
    with pytest.raises(ValueError, match="backend must be one of"):
        fold.fold_partials(P, backend="cuda")


def test_build_cache_is_reused_and_builds_are_atomic(monkeypatch, tmp_path):
    monkeypatch.setenv("MXFP4_FUZZ_CACHE", str(tmp_path))
    native.forget_loaded()
    try:
        tc = native.toolchain_for("cpu")
        if tc.compiler is None:
            pytest.skip(tc.missing_reason())
        before = native.build_count
        # Two concurrent builders into an empty cache: each compiles to its own temp file and renames.
        paths = []
        threads = [threading.Thread(target=lambda: paths.append(native.build(tc))) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(paths) == 2 and paths[0] == paths[1] == native.library_path(tc)
        assert paths[0].parent == tmp_path / "fold"
        assert sorted(p.name for p in paths[0].parent.iterdir()) == [paths[0].name], "temp files left behind"
        compiled = native.build_count - before
        assert compiled in (1, 2)
        mtime = paths[0].stat().st_mtime_ns

        native.forget_loaded()
        lib = native.load("cpu")
        native.forget_loaded()
        native.load("cpu")
        assert native.build_count - before == compiled, "a cached build was recompiled"
        assert lib.path == paths[0] and paths[0].stat().st_mtime_ns == mtime
    finally:
        native.forget_loaded()


def test_cache_key_follows_toolchain(monkeypatch, tmp_path):
    monkeypatch.setenv("MXFP4_FUZZ_CACHE", str(tmp_path))
    a = native.Toolchain("cuda", "sm_90", "/bin/true")
    b = native.Toolchain("cuda", "sm_100", "/bin/true")
    assert native.library_path(a) != native.library_path(b)
    assert "--offload-arch=gfx950" in native.Toolchain("hip", "gfx950", "/bin/true").command("x.so")


def test_missing_compiler_is_reported(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    tc = native.toolchain_for("cpu")
    assert tc.compiler is None
    with pytest.raises(native.BuildError, match=r"g\+\+ \(or \$CXX\) not found"):
        native.build(tc)


def _nvcc_or_skip() -> native.Toolchain:
    tc = native.toolchain_for("cuda", arch="sm_90")
    if tc.compiler is None:
        pytest.skip("nvcc not installed: the CUDA build of fold_kernel.cu is not checked here")
    return tc


def test_nvcc_builds_the_same_source(monkeypatch, tmp_path):
    monkeypatch.setenv("MXFP4_FUZZ_CACHE", str(tmp_path))
    path = native.build(_nvcc_or_skip())
    lib = ctypes.CDLL(str(path))  # statically linked cudart: loads without a GPU
    for sym in ("fold_launch", "fold_pick_path", "fold_last_error"):
        assert hasattr(lib, sym), f"{sym} not exported from the nvcc build"
    assert not hasattr(lib, "hip_cpu_access_counts"), "the CPU shim leaked into the CUDA build"


def test_nvcc_vector_kernels_use_wide_accesses(tmp_path):
    tc = _nvcc_or_skip()
    ptx = tmp_path / "fold.ptx"
    cmd = [tc.compiler, "-O3", "-std=c++17", "-arch=sm_90", "-ptx", str(native.SOURCE), "-o", str(ptx)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    entries = re.split(r"\.entry\s+", ptx.read_text())[1:]
    vector = [e for e in entries if e.startswith("_Z18fold_vector_kernel")]
    scalar = [e for e in entries if e.startswith("_Z18fold_scalar_kernel")]
    assert len(vector) == 8 and len(scalar) == 1
    for body in vector:
        assert re.search(r"ld\.global(\.nc)?\.v4\.(f32|b32)", body), "float4 load not vectorised"
        assert re.search(r"st\.global\.(u64|b64)", body), "4 x bf16 not stored as one 64-bit store"
    assert not re.search(r"\.v4\.", scalar[0])


def test_hipcc_builds_the_same_source(monkeypatch, tmp_path):
    tc = native.toolchain_for("hip", arch="gfx950")
    if tc.compiler is None:
        pytest.skip("hipcc not installed (no ROCm toolchain here): the gfx950 build is not checked")
    monkeypatch.setenv("MXFP4_FUZZ_CACHE", str(tmp_path))
    assert native.build(tc).exists()


# Ahead-of-time compiles run where @triton.jit gives JITFunctions: a fresh process with TRITON_INTERPRET=0
# (the one AOT path of the suite, as fuzz/codegen/gfx950.py's worker compiles the fused kernel).
ROOT = Path(__file__).resolve().parents[2]
FOLD_TTIR_PROBE = """
import sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kernels.fold import triton_fold

backend, arch, warp = sys.argv[1], sys.argv[2], int(sys.argv[3])
sig = {"p_ptr": "*fp32", "out_ptr": "*u16", "n": "i32", "slice_stride": "i32", "S": "i32", "BLOCK": "constexpr"}
kernel = triton.compile(ASTSource(triton_fold._fold_kernel, sig, {"BLOCK": triton_fold.BLOCK}),
                        target=GPUTarget(backend, int(arch) if arch.isdigit() else arch, warp))
sys.stdout.write(kernel.asm["ttir"])
"""


@pytest.mark.parametrize("backend,arch,warp", [("hip", "gfx950", 64), ("cuda", 90, 32)])
def test_triton_fold_compiles_for_gpus_without_bf16_casts(tmp_path, backend, arch, warp):
    """The interpreter is laxer than the compiler: compile the same kernel ahead of time for both GPU targets."""
    import sys

    import triton.backends

    if {"hip": "amd", "cuda": "nvidia"}[backend] not in triton.backends.backends:
        pytest.skip(f"this Triton build has no {backend} backend")
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_CACHE_DIR": str(tmp_path), "TRITON_DEFAULT_FP_FUSION": "0",
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", FOLD_TTIR_PROBE, backend, str(arch), str(warp)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ttir = done.stdout
    assert "bf16" not in ttir, "a float->bf16 cast would round differently in the interpreter"
    assert re.search(r"tt\.store .*tt\.ptr<i16>", ttir)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or ROCm device")
@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_fold_matches_reference(backend):
    ok, reason = fold.native_available("cuda")
    if backend == "native" and not ok:
        pytest.skip(reason)
    # (S, M, N, slice padding, base offset in floats): vector, vector + tail, and misaligned -> scalar cases
    for S, M, N, pad, off in [(1, 7, 9, 0, 0), (3, 64, 3072, 0, 0), (14, 16, 2112, 0, 0), (7, 5, 7, 1, 0),
                              (7, 5, 7, 0, 0), (2, 256, 2880, 0, 1)]:
        values = random_values(np.random.default_rng(S * M), S, M, N, 0.05)
        y = fold.fold_partials(partials_view(values, M * N + pad, off, "cuda"), backend=backend)
        torch.cuda.synchronize()
        assert_bits_equal(y.cpu(), expected_bits(values))


def test_native_available_reports_the_build():
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    ok, reason = fold.native_available("cpu")
    assert ok and reason.endswith(".so"), reason
    assert fold.resolve_backend("auto", "cpu") == "native"
