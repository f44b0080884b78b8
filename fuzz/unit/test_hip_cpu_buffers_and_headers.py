"""The CPU model with what header libraries such as aiter's opus.hpp bring: buffer resources and raw buffer
loads and stores (in range, out of range, and what the model refuses to decide), the median and the
declared-only builtins (fp8 conversions, DPP: NOT RUN when reached), ``__fp16`` returned by value, and an
included folder whose headers hold inline asm the model lacks (built; NOT RUN only where the asm runs; an
edited header rebuilt)."""
import ctypes

import pytest

from reference.emulation.hip_cpu import build

pytestmark = pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")

SOURCE = r"""
#include <hip/hip_runtime.h>
// one lane per element: lane t loads the dword at byte offset 4 t + shift of a buffer of num bytes
__global__ void load_dwords(const int* src, int num, int shift, int soffset, int* out) {
    __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc((void*)src, 0, num, 0x00020000);
    out[threadIdx.x] = (int)__builtin_amdgcn_raw_buffer_load_b32(r, 4 * threadIdx.x + shift, soffset, 0);
}
__global__ void store_dwords(int* dst, int num) {
    __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc((void*)dst, 0, num, 0x00020000);
    __builtin_amdgcn_raw_buffer_store_b32(100 + threadIdx.x, r, 4 * threadIdx.x, 0, 0);
}
typedef int v4i __attribute__((ext_vector_type(4)));
__global__ void load_128(const int* src, int num, int* out) {  // one lane: a 16-byte load, dwords checked apart
    __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc((void*)src, 0, num, 0x00020000);
    v4i v = __builtin_bit_cast(v4i, __builtin_amdgcn_raw_buffer_load_b128(r, 0, 0, 0));
    for (int i = 0; i < 4; ++i) out[i] = v[i];
}
__global__ void median(const float* x, float* out) { out[0] = __builtin_amdgcn_fmed3f(x[0], x[1], x[2]); }
__global__ void dpp(int* out) { out[threadIdx.x] = __builtin_amdgcn_mov_dpp(threadIdx.x, 0x111, 0xf, 0xf, false); }
__global__ void fp8(int* out) { out[0] = __builtin_amdgcn_cvt_pk_fp8_f32(1.0f, 2.0f, 0, false); }
__global__ void hinted_readlane(int* out) {  // scheduling hints change nothing; readlane reads one lane
    __builtin_amdgcn_sched_group_barrier(0x008, 1, 0);
    __builtin_amdgcn_iglp_opt(0);
    __builtin_amdgcn_s_sleep(1);
    out[threadIdx.x] = __builtin_amdgcn_readlane(100 + (int)threadIdx.x, 37);
}
__global__ void readlane_of_an_exited_lane(int* out) {
    if (threadIdx.x == 5) return;
    out[threadIdx.x] = __builtin_amdgcn_readlane((int)threadIdx.x, 5);
}
extern "C" int run_readlane(int* out, int exited) {
    if (exited) readlane_of_an_exited_lane<<<1, 64>>>(out); else hinted_readlane<<<1, 64>>>(out);
    return (int)hipGetLastError(); }
extern "C" unsigned perm(unsigned a, unsigned b, unsigned sel) { return __builtin_amdgcn_perm(a, b, sel); }
__fp16 half_of(float x) { return (__fp16)(x * 0.5f); }  // a returned __fp16, as opus.hpp's casts
extern "C" float halve(float x) { return (float)half_of(x); }
extern "C" int run_load(const int* src, int num, int shift, int soffset, int* out, int lanes) {
    load_dwords<<<1, lanes>>>(src, num, shift, soffset, out); return (int)hipGetLastError(); }
extern "C" int run_store(int* dst, int num, int lanes) { store_dwords<<<1, lanes>>>(dst, num); return (int)hipGetLastError(); }
extern "C" int run_load_128(const int* src, int num, int* out) { load_128<<<1, 1>>>(src, num, out); return (int)hipGetLastError(); }
extern "C" int run_median(const float* x, float* out) { median<<<1, 1>>>(x, out); return (int)hipGetLastError(); }
extern "C" int run_dpp(int* out) { dpp<<<1, 64>>>(out); return (int)hipGetLastError(); }
extern "C" int run_fp8(int* out) { fp8<<<1, 1>>>(out); return (int)hipGetLastError(); }
"""
NOT_MODELLED = 1000  # hip_cpu_runtime.h kNotModelled: the launch's error while the model says why


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    library = ctypes.CDLL(str(build.compile_shared([SOURCE], tmp_path_factory.mktemp("buffers") / "k.so")))
    library.hip_cpu_take_unmodelled.restype = ctypes.c_char_p
    library.halve.restype = ctypes.c_float
    library.halve.argtypes = [ctypes.c_float]
    return library


def ints(*values):
    return (ctypes.c_int * len(values))(*values)


def test_raw_buffer_loads_read_in_range_dwords_and_zero_beyond_num_records(lib):
    src, out = ints(*range(10, 18)), ints(*([-1] * 8))
    assert lib.run_load(src, 5 * 4, 0, 0, out, 8) == 0
    assert list(out) == [10, 11, 12, 13, 14, 0, 0, 0]  # dwords 5-7 lie at or past num_records = 20 bytes
    assert lib.run_load(src, 8 * 4, 4, 0, out, 4) == 0
    assert list(out)[:4] == [11, 12, 13, 14]  # the voffset shifts the window


def test_raw_buffer_stores_beyond_num_records_are_dropped(lib):
    dst = ints(*([-1] * 8))
    assert lib.run_store(dst, 3 * 4, 8) == 0
    assert list(dst) == [100, 101, 102, -1, -1, -1, -1, -1]


def test_a_wide_load_wholly_in_or_out_of_range_and_partly_not_run(lib):
    src, out = ints(1, 2, 3, 4), ints(-1, -1, -1, -1)
    assert lib.run_load_128(src, 16, out) == 0 and list(out) == [1, 2, 3, 4]
    assert lib.run_load_128(src, 0, out) == 0 and list(out) == [0, 0, 0, 0]
    assert lib.run_load_128(src, 8, out) == NOT_MODELLED  # dwords 2-3 past num_records: per dword or whole?
    assert "partly past num_records" in lib.hip_cpu_take_unmodelled().decode()


@pytest.mark.parametrize("shift, soffset, why", [(2, 0, "straddling"), (0, 8, "soffset")])
def test_what_the_range_check_leaves_open_is_not_run_named(lib, shift, soffset, why):
    src, out = ints(*range(8)), ints(*([0] * 8))
    assert lib.run_load(src, 4 * 4, shift, soffset, out, 4) == NOT_MODELLED
    assert why in lib.hip_cpu_take_unmodelled().decode()


def test_median_of_three(lib):
    out = (ctypes.c_float * 1)()
    for triple, expected in [((1.0, 3.0, 2.0), 2.0), ((-5.0, 7.0, 9.0), 7.0), ((4.0, 4.0, -1.0), 4.0)]:
        assert lib.run_median((ctypes.c_float * 3)(*triple), out) == 0
        assert out[0] == expected
    assert lib.run_median((ctypes.c_float * 3)(float("nan"), 1.0, 2.0), out) == NOT_MODELLED
    assert "NaN" in lib.hip_cpu_take_unmodelled().decode()


@pytest.mark.parametrize("run, name", [("run_dpp", "__builtin_amdgcn_mov_dpp"),
                                       ("run_fp8", "__builtin_amdgcn_cvt_pk_fp8_f32")])
def test_declared_only_builtins_are_not_run_when_reached(lib, run, name):
    assert getattr(lib, run)(ints(*([0] * 64))) == NOT_MODELLED
    assert name in lib.hip_cpu_take_unmodelled().decode()


def test_scheduling_hints_change_nothing_and_readlane_reads_one_lane(lib):
    out = ints(*([0] * 64))
    assert lib.run_readlane(out, 0) == 0 and list(out) == [137] * 64
    assert lib.run_readlane(out, 1) == NOT_MODELLED
    assert "exited" in lib.hip_cpu_take_unmodelled().decode()


# v_perm_b32 as clang-22 folds it for gfx950 (a probe of constant operands, compiled with -O2 -S, 2026-12-07)
PERM_PROBE = [((0x87654321, 0xFEDCBA98, 0x07060504), 0x87654321), ((0x87654321, 0xFEDCBA98, 0x03020100), 0xFEDCBA98),
              ((0x87654321, 0xFEDCBA98, 0x0B0A0908), 0xFF00FFFF), ((0x87654321, 0xFEDCBA98, 0x0F0E0D0C), 0xFFFFFF00),
              ((0x07654321, 0x7EDC3A18, 0x0B0A0908), 0x00000000)]


def perm_reference(a: int, b: int, sel: int) -> int:
    """The ISA's byte_permute over the eight bytes {a, b} (b low)."""
    data, out = (a << 32) | b, 0
    for i in range(4):
        s = (sel >> (8 * i)) & 0xFF
        byte = 0xFF if s >= 13 else 0 if s == 12 else (0xFF if (data >> (8 * (2 * (s - 8) + 1) + 7)) & 1 else 0) \
            if s >= 8 else (data >> (8 * s)) & 0xFF
        out |= byte << (8 * i)
    return out


def test_byte_permute_as_gfx950(lib):
    import random

    lib.perm.restype = ctypes.c_uint
    lib.perm.argtypes = [ctypes.c_uint] * 3
    for (a, b, sel), expected in PERM_PROBE:
        assert lib.perm(a, b, sel) == expected == perm_reference(a, b, sel)
    rng = random.Random(7)
    for _ in range(2000):  # every selector byte value appears
        a, b, sel = rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32)
        assert lib.perm(a, b, sel) == perm_reference(a, b, sel)


def test_a_returned_fp16_is_binary16(lib):
    assert lib.halve(3.0) == 1.5
    assert lib.halve(1.0 / 3.0) == pytest.approx(1.0 / 6.0, abs=2 ** -13)  # rounded to 11 significant bits
    assert lib.halve(1.0 / 3.0) != 1.0 / 6.0


HEADER = r"""
#pragma once
// a helper library's header: one helper in the model's terms, one in gfx950 asm the model lacks
__device__ inline int plain_add(int a, int b) { return a + b; }
__device__ inline int asm_add(int a, int b) {
    int out;
    asm volatile("v_add_u32 %0, %1, %2" : "=v"(out) : "v"(a), "v"(b));
    return out;
}
"""
USER = r"""
#include <hip/hip_runtime.h>
#include "helpers/add.hpp"
__global__ void k(int* out, int use_asm) { out[0] = use_asm ? asm_add(2, 3) : plain_add(2, VALUE); }
extern "C" int run(int* out, int use_asm) { k<<<1, 1>>>(out, use_asm); return (int)hipGetLastError(); }
"""


def test_an_included_folder_with_inline_asm_builds_and_only_its_asm_is_not_run(tmp_path):
    folder = tmp_path / "include"
    (folder / "helpers").mkdir(parents=True)
    (folder / "helpers" / "add.hpp").write_text(HEADER.replace("VALUE", "3"))
    library = ctypes.CDLL(str(build.compile_shared([USER.replace("VALUE", "3")], tmp_path / "a.so",
                                                   includes=[str(folder)])))
    library.hip_cpu_take_unmodelled.restype = ctypes.c_char_p
    out = ints(0)
    assert library.run(out, 0) == 0 and out[0] == 5
    assert library.run(out, 1) == NOT_MODELLED
    assert "inline asm (v_add_u32) in helpers/add.hpp" in library.hip_cpu_take_unmodelled().decode()
    # the source's own inline asm is still refused at build time, by name (the source is what the file runs)
    with pytest.raises(build.NotModelled, match="inline asm"):
        build.compile_shared([USER + HEADER.split("#pragma once")[1].replace("asm_add", "own_asm_add")],
                             tmp_path / "b.so", includes=[str(folder)])


@pytest.mark.parametrize("with_asm", [True, False], ids=["staged", "read_in_place"])
def test_an_edited_header_is_rebuilt(tmp_path, with_asm):
    """A staged folder's copy is named by its state; a folder read in place is in the build's key by its state."""
    folder = tmp_path / "include"
    (folder / "helpers").mkdir(parents=True)
    header = folder / "helpers" / "add.hpp"
    source = USER.replace("plain_add(2, VALUE)", "plain_add(2, 3)")
    if not with_asm:
        source = source.replace("use_asm ? asm_add(2, 3) : ", "")
    text = HEADER if with_asm else HEADER[:HEADER.index("__device__ inline int asm_add")]
    results = []
    for body in ("return a + b;", "return a * b;"):
        header.write_text(text.replace("return a + b;", body))
        library = ctypes.CDLL(str(build.compile_shared([source], tmp_path / f"{len(results)}.so", includes=[str(folder)])))
        out = ints(0)
        library.run(out, 0)
        results.append(out[0])
    assert results == [5, 6]


def test_a_headers_dynamic_lds_array_is_translated_as_the_sources_is(tmp_path):
    """``extern __shared__`` in an included header (no inline asm there) is staged and translated too."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "lds.hpp").write_text(
        "#pragma once\n__device__ inline int via_lds(int v) { extern __shared__ int dyn[]; dyn[threadIdx.x] = v; "
        "__syncthreads(); return dyn[(threadIdx.x + 1) % blockDim.x]; }\n")
    source = ('#include <hip/hip_runtime.h>\n#include "lds.hpp"\n__global__ void k(int* o) { o[threadIdx.x] = '
              'via_lds(threadIdx.x); }\nextern "C" int run(int* o) { k<<<1, 64, 64 * sizeof(int)>>>(o); '
              'return (int)hipGetLastError(); }\n')
    library = ctypes.CDLL(str(build.compile_shared([source], tmp_path / "a.so", includes=[str(tmp_path / "inc")])))
    out = ints(*([0] * 64))
    assert library.run(out) == 0 and list(out) == [(t + 1) % 64 for t in range(64)]
