"""gfx950's float -> integer conversions, computed on the CPU tier (interpreter) and the NVIDIA tier
(compiled Triton), so a file's own Triton kernels convert as the runner's MI355X does.

Why: aiter's quantizer writes a scale byte as ``scale.to(tl.uint8) + 127`` with ``scale`` a possibly
negative float. Out of range, LLVM's ``fptoui float to i8`` is poison, so each backend picks its value:
compiled for gfx950 it is the low byte of a saturating 32-bit convert (-5.0 -> 251, +127 -> 122, what
aiter means); on NVIDIA ``cvt.rzi.u8.f32`` saturates (every negative -> 0, so the scale bytes are wrong
and a real file that copies aiter fails there although the runner passes it); numpy's ``astype`` in the
interpreter gives 251 for -5.0 but x86's "integer indefinite" 0x80000000 for NaN and huge values.

Facts (AOT-compiled here for ``GPUTarget("hip", "gfx950", 64)`` with triton 3.9, ``isa_probe()``
reruns it; the instruction semantics are the AMD ISA's, see ``SEMANTICS``): ``INSTRUCTIONS`` is the
table source x target -> instruction sequence. In short, from fp32 and bf16 (bf16 is widened by a
16-bit shift first) every target narrower than 32 bits is the low bits of ``v_cvt_i32_f32`` (int8,
uint8, int16) or ``v_cvt_u32_f32`` (uint16); from fp16 LLVM folds the widening away, and int8, uint8
and int16 are the low bits of ``v_cvt_i16_f16``, uint16 is ``v_cvt_u16_f16``; 32-bit targets are the
saturating converts themselves; 64-bit targets from fp32/bf16 are a split into two 32-bit halves
(``v_trunc``, ``v_mul`` by 2^-32, ``v_floor``, ``v_fma`` by -2^32, two ``v_cvt_u32_f32``, a sign fix)
which saturates only per half (+inf -> int64 -4294967296); from fp16 they are the 32-bit convert
sign- or zero-extended.

What is modelled: the value a conversion has when it is stored, or used by arithmetic whose low bits
depend only on the operands' low bits (+ - * & | ^ <<, then stored): the sequence above, exactly, for
every input (NaN, +-Inf, huge values included). What is not: gfx950 keeps the whole 32-bit (fp16: 16-bit)
register for a narrow result and LLVM's range assumptions then let the backend skip the truncation
when the value is widened or compared right away (``x.to(tl.uint8).to(tl.int32)`` is plain
``v_cvt_i32_f32``: -5.0 -> -5, 300.0 -> 300; ``x.to(tl.uint8) > 200`` compares the low 16 bits).
Code relying on that relies on poison; ``CONTEXT_DEPENDENT`` lists what was seen.

Two patches, each named, version-gated and probed like ``triton_interpreter.Patch``:

- ``float_to_int_frontend``: ``TritonSemantic.cast`` from fp16/bf16/fp32 to an integer type emits
  gfx950's operation sequence built from operations that are defined for every input in LLVM (NaN and
  out-of-range lanes are selected away before each ``fptosi``/``fptoui``, the saturated value selected
  back), then truncates: compiled NVIDIA code and the interpreter both compute gfx950's value. While
  installed, ``TRITON_CACHE_DIR`` points at a subdirectory of its own: Triton's cache key does not see
  a patched frontend, and a kernel compiled without it must not be reused.
- ``float_to_int_interpreter``: the interpreter builder's ``create_fp_to_si``/``create_fp_to_ui`` are
  numpy's ``astype`` (x86: 0x80000000 for NaN and out of range); now they compute the same model (what
  a bare ``fptosi``/``fptoui`` from fp32 lowers to on gfx950), for code that reaches the builder
  without the frontend's cast.

Install both on the cpu tier and the frontend patch on the nvidia tier, before any kernel compiles;
never on the amd tier (``install()`` refuses where torch runs on HIP).
"""
from __future__ import annotations

import math
import os

import numpy as np

from reference.emulation.patch_registry import Patch, _swap, _undo_all, install_patches, uninstall_patches

tl = None  # triton.language, imported on first use: the platform fixes Triton's mode before any import


def _triton_language():
    global tl
    if tl is None:
        import triton.language as language

        tl = language
    return tl

INT_TARGETS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
FLOAT_SOURCES = ("fp32", "bf16", "fp16")
_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64, "uint64": 64}

# ISA semantics of the instructions below (AMD GCN/CDNA ISA text, as in CLRX's transcription of the
# VOP1 pages; LLVM's AMDGPU backend lowers llvm.fptosi.sat/fptoui.sat directly to v_cvt_* because "the
# underlying hardware instructions provide the expected behaviour", llvm-project #174726, #186769).
SEMANTICS = {
    "v_cvt_i32_f32": "round toward zero; saturate to [-2^31, 2^31-1] (+-Inf too); NaN -> 0",
    "v_cvt_u32_f32": "round toward zero; saturate to [0, 2^32-1] (negatives and -Inf -> 0); NaN -> 0",
    "v_cvt_i16_f16": "round toward zero; saturate to [-2^15, 2^15-1]; NaN -> 0",
    "v_cvt_u16_f16": "round toward zero; saturate to [0, 2^16-1]; NaN -> 0",
    "v_cvt_f32_f16": "exact widening",
    "v_lshlrev_b32 16": "bf16 -> fp32, exact widening",
    "v_trunc_f32": "round toward zero, in fp32; Inf/NaN unchanged",
    "v_floor_f32": "round toward -Inf, in fp32; Inf/NaN unchanged",
    "v_fma*_f32": "fused multiply-add (v_fma_f32, v_fmamk_f32 with a literal), one rounding (RNE)",
    "*_store_byte": "buffer_/global_store_byte: stores the low 8 bits of the 32-bit register",
    "*_store_short": "buffer_/global_store_short: stores the low 16 bits of the 32-bit register",
}

_I64_FROM_F32 = ("v_trunc_f32", "v_mul_f32 |t|*2^-32", "v_floor_f32", "v_fma*_f32 hi*-2^32+|t|",
                 "v_cvt_u32_f32 x2", "v_xor_b32/v_sub_co_u32/v_subb_co_u32 (sign of t)")
_U64_FROM_F32 = ("v_trunc_f32", "v_mul_f32 t*2^-32", "v_floor_f32", "v_fma*_f32 hi*-2^32+t", "v_cvt_u32_f32 x2")

# (source, target) -> the conversion instructions gfx950 runs (AOT-compiled, triton 3.9), as fnmatch
# patterns (the first word; the store and the fma's encoding depend on the kernel around them); bf16
# sources first run "v_lshlrev_b32 16" (the exact widening), omitted here.
INSTRUCTIONS = {}
for _src in ("fp32", "bf16"):
    INSTRUCTIONS.update({
        (_src, "int8"): ("v_cvt_i32_f32", "*_store_byte"),
        (_src, "uint8"): ("v_cvt_i32_f32", "*_store_byte"),
        (_src, "int16"): ("v_cvt_i32_f32", "*_store_short"),
        (_src, "uint16"): ("v_cvt_u32_f32", "*_store_short"),
        (_src, "int32"): ("v_cvt_i32_f32",),
        (_src, "uint32"): ("v_cvt_u32_f32",),
        (_src, "int64"): _I64_FROM_F32,
        (_src, "uint64"): _U64_FROM_F32,
    })
INSTRUCTIONS.update({
    ("fp16", "int8"): ("v_cvt_i16_f16", "*_store_byte"),
    ("fp16", "uint8"): ("v_cvt_i16_f16", "*_store_byte"),
    ("fp16", "int16"): ("v_cvt_i16_f16", "*_store_short"),
    ("fp16", "uint16"): ("v_cvt_u16_f16", "*_store_short"),
    ("fp16", "int32"): ("v_cvt_f32_f16", "v_cvt_i32_f32"),
    ("fp16", "uint32"): ("v_cvt_f32_f16", "v_cvt_u32_f32"),
    ("fp16", "int64"): ("v_cvt_f32_f16", "v_cvt_i32_f32", "v_ashrrev_i32 31"),
    ("fp16", "uint64"): ("v_cvt_f32_f16", "v_cvt_u32_f32", "high word 0"),
})

# Seen in the AOT probe, not modelled (each relies on poison: the frontend patch gives the stored value).
CONTEXT_DEPENDENT = {
    "fp32 x.to(uint8).to(int32)": "v_cvt_i32_f32 alone (zext dropped): the whole saturated i32",
    "fp32 x.to(int8).to(int32)": "v_cvt_i32_f32 alone (sext dropped): the whole saturated i32",
    "fp32 x.to(uint8) > 200": "v_cmp_lt_u16 on the i32 register: compares its low 16 bits",
    "fp16 x.to(uint8).to(int32)": "v_cvt_i16_f16 then & 0xffff: the low 16 bits of the saturated i16",
    "fp32 (x.to(uint8) + 127).to(int32)": "v_add_u16 then & 0xff: the low byte, as modelled",
}

# ---------------------------------------------------------------------------------------------------
# The instruction models (numpy), and the value of each conversion built from them


def _trunc_sat(x, lo: int, hi: int) -> np.ndarray:
    """Round toward zero and saturate to [lo, hi]; NaN -> 0 (every v_cvt_{i,u}{16,32}_f{16,32})."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        t = np.clip(np.trunc(np.where(np.isnan(x), 0.0, x)), lo, hi)
    return t.astype(np.int64)


def v_cvt_i32_f32(x):
    return _trunc_sat(x, -2**31, 2**31 - 1)


def v_cvt_u32_f32(x):
    return _trunc_sat(x, 0, 2**32 - 1)


def v_cvt_i16_f16(x):
    return _trunc_sat(x, -2**15, 2**15 - 1)


def v_cvt_u16_f16(x):
    return _trunc_sat(x, 0, 2**16 - 1)


def _fma_f32(a, b, c) -> np.ndarray:
    # exact here: both addends are integers whose sum fits float64; one rounding to fp32 follows
    with np.errstate(invalid="ignore", over="ignore"):
        return (a.astype(np.float64) * np.float64(b) + c.astype(np.float64)).astype(np.float32)


def _u64_of_halves(hi, lo) -> np.ndarray:
    return (v_cvt_u32_f32(hi).astype(np.uint64) << np.uint64(32)) | v_cvt_u32_f32(lo).astype(np.uint64)


def _i64_from_f32(x32: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.trunc(x32)
        a = np.abs(t)
        hi = np.floor(a * np.float32(2.0**-32))
        lo = _fma_f32(hi, -2.0**32, a)
    m = np.where(np.signbit(t), np.uint64(2**64 - 1), np.uint64(0))
    return ((_u64_of_halves(hi, lo) ^ m) - m).view(np.int64)  # uint64 wraps: two's complement negate


def _u64_from_f32(x32: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.trunc(x32)
        hi = np.floor(t * np.float32(2.0**-32))
        lo = _fma_f32(hi, -2.0**32, t)
    return _u64_of_halves(hi, lo)


def _wrap(values, dst: str) -> np.ndarray:
    """Keep the low bits, as the narrow store does."""
    bits = _BITS[dst]
    unsigned = np.asarray(values).astype(np.int64).view(np.uint64) & np.uint64(2**bits - 1)
    return unsigned.astype(np.dtype(f"uint{bits}")).view(np.dtype(dst))


def gfx950_convert(values, src: str, dst: str) -> np.ndarray:
    """What ``x.to(dst)`` stores on gfx950 for ``x`` of type ``src`` (fp32, bf16 or fp16); ``values``
    must be representable in ``src`` (float64/float32/float16 arrays are fine)."""
    if src not in FLOAT_SOURCES or dst not in INT_TARGETS:
        raise ValueError(f"no gfx950 model for {src} -> {dst}")
    x = np.asarray(values, dtype=np.float64)
    if src == "fp16":
        if dst in ("int8", "uint8", "int16"):
            return _wrap(v_cvt_i16_f16(x), dst)
        if dst == "uint16":
            return _wrap(v_cvt_u16_f16(x), dst)
        if dst in ("int32", "int64"):
            return v_cvt_i32_f32(x).astype(np.dtype(dst))  # int64: sign-extended
        return v_cvt_u32_f32(x).astype(np.dtype(dst))  # uint32, uint64 (high word 0)
    x32 = x.astype(np.float32)
    if dst in ("int8", "uint8", "int16", "int32"):
        return _wrap(v_cvt_i32_f32(x32), dst)
    if dst in ("uint16", "uint32"):
        return _wrap(v_cvt_u32_f32(x32), dst)
    return _i64_from_f32(x32) if dst == "int64" else _u64_from_f32(x32)


# ---------------------------------------------------------------------------------------------------
# The catalogue's table: fp32 inputs, five idioms, derived from the ISA and written out as data

PROBE_INPUTS = (-5.0, -1.0, -0.5, 0.0, 1.0, 3.0, 127.0, 200.0, 255.0, 256.0, 300.0, -127.0, -130.0,
                1e10, -1e10, math.inf, -math.inf, math.nan)


def label(value: float) -> str:
    """The key of an input in the tables (NaN cannot be a dict key that compares equal)."""
    return f"{value:g}"


PROBE_LABELS = tuple(label(v) for v in PROBE_INPUTS)
PROBE_OPS = ("to_uint8", "to_uint8_plus_127", "to_int8", "to_int32", "to_uint32")


def _table(*outputs):
    assert len(outputs) == len(PROBE_LABELS)
    return dict(zip(PROBE_LABELS, outputs))


_IMAX, _IMIN, _UMAX = 2**31 - 1, -2**31, 2**32 - 1

GFX950_EXPECTED = {
    # inputs:  -5    -1  -0.5  0  1  3  127  200  255  256  300  -127  -130  1e10  -1e10  inf  -inf  nan
    "to_uint8": {
        "instructions": ("v_cvt_i32_f32", "*_store_byte"),
        "values": _table(251, 255, 0, 0, 1, 3, 127, 200, 255, 0, 44, 129, 126, 255, 0, 255, 0, 0)},
    "to_uint8_plus_127": {
        "instructions": ("v_cvt_i32_f32", "v_add_u16", "*_store_byte"),
        "values": _table(122, 126, 127, 127, 128, 130, 254, 71, 126, 127, 171, 0, 253, 126, 127, 126, 127, 127)},
    "to_int8": {
        "instructions": ("v_cvt_i32_f32", "*_store_byte"),
        "values": _table(-5, -1, 0, 0, 1, 3, 127, -56, -1, 0, 44, -127, 126, -1, 0, -1, 0, 0)},
    "to_int32": {
        "instructions": ("v_cvt_i32_f32",),
        "values": _table(-5, -1, 0, 0, 1, 3, 127, 200, 255, 256, 300, -127, -130, _IMAX, _IMIN, _IMAX, _IMIN, 0)},
    "to_uint32": {
        "instructions": ("v_cvt_u32_f32",),
        "values": _table(0, 0, 0, 0, 1, 3, 127, 200, 255, 256, 300, 0, 0, _UMAX, 0, _UMAX, 0, 0)},
}


# ---------------------------------------------------------------------------------------------------
# float_to_int_frontend: the cast, as gfx950 computes it, from operations defined for every input


class _Emit:
    """Builder calls on handles shaped like one tensor (block or scalar); every call used here exists,
    with these arguments, in the compiled ir.builder and the InterpreterBuilder (triton 3.4 to 3.9)."""

    def __init__(self, semantic, like):
        self.sem, self.b = semantic, semantic.builder
        self.block = like.type if like.type.is_block() else None

    def ty(self, scalar):
        return self.block.with_element_ty(scalar) if self.block is not None else scalar

    def ir(self, scalar):
        return self.ty(scalar).to_ir(self.b)

    def const(self, value, scalar):
        handle = getattr(self.b, f"get_{scalar.name}")(value)
        return self.b.create_splat(self.ir(scalar), handle) if self.block is not None else handle

    def sat(self, x, bits: int, signed: bool):
        """fp32 ``x`` -> 32-bit integer: round toward zero, saturate to the signed/unsigned ``bits``-bit
        range, NaN -> 0. Lanes a plain fptosi/fptoui would make poison are given 0.0 first."""
        b, f32 = self.b, tl.float32
        lo, hi = (-2**(bits - 1), 2**(bits - 1) - 1) if signed else (0, 2**bits - 1)
        big = b.create_fcmpOGE(x, self.const(float(hi + 1), f32))  # hi + 1 is a power of two: exact
        small = b.create_fcmpOLT(x, self.const(float(lo), f32))  # unsigned: x < 0, whose result is 0
        bad = b.create_or(b.create_or(big, small), b.create_fcmpUNE(x, x))
        safe = b.create_select(bad, self.const(0.0, f32), x)
        out_ty = tl.int32 if signed else tl.uint32
        r = (b.create_fp_to_si if signed else b.create_fp_to_ui)(safe, self.ir(out_ty))
        r = b.create_select(big, self.const(hi, out_ty), r)
        return b.create_select(small, self.const(lo, out_ty), r) if signed else r

    def split64(self, t, magnitude: bool):
        """gfx950's fp32 -> 64-bit sequence; ``t`` is trunc(x) (signed: its magnitude is used)."""
        b, f32, i64 = self.b, tl.float32, tl.int64
        a = b.create_fabs(t) if magnitude else t
        hi = b.create_floor(b.create_fmul(a, self.const(2.0**-32, f32)))
        lo = b.create_fma(hi, self.const(-2.0**32, f32), a)
        hu = b.create_int_cast(self.sat(hi, 32, False), self.ir(i64), False)
        lu = b.create_int_cast(self.sat(lo, 32, False), self.ir(i64), False)
        return b.create_or(b.create_shl(hu, self.const(32, i64)), lu)

    def trunc(self, x):
        """v_trunc_f32 without a trunc op: floor(|x|) with x's sign."""
        b = self.b
        fl = b.create_floor(b.create_fabs(x))
        negative = b.create_fcmpOLT(x, self.const(0.0, tl.float32))
        return b.create_select(negative, b.create_fmul(fl, self.const(-1.0, tl.float32)), fl)


def _gfx950_cast_value(semantic, x, src: str, dst: str):
    """The handle of ``x.to(dst)`` as gfx950 computes it; ``x`` is already fp32 (widened exactly)."""
    e, b = _Emit(semantic, x), semantic.builder
    h = x.handle
    dst_ty = getattr(tl, dst)
    bits = _BITS[dst]
    if bits == 64 and src != "fp16":
        t = e.trunc(h)
        if dst == "uint64":
            return e.split64(t, magnitude=False)
        magnitude = e.split64(t, magnitude=True)
        sign = b.create_ashr(b.create_bitcast(t, e.ir(tl.int32)), e.const(31, tl.int32))
        sign = b.create_int_cast(sign, e.ir(tl.int64), True)
        return b.create_sub(b.create_xor(magnitude, sign), sign)
    if src == "fp16" and bits <= 16:
        r = e.sat(h, 16, dst != "uint16")  # v_cvt_i16_f16 / v_cvt_u16_f16
    else:
        r = e.sat(h, 32, dst not in ("uint16", "uint32", "uint64"))  # v_cvt_i32_f32 / v_cvt_u32_f32
    if bits == 32:
        return r
    if bits == 64:  # fp16: the 32-bit convert, sign- or zero-extended
        return b.create_int_cast(r, e.ir(dst_ty), dst == "int64")
    return b.create_int_cast(r, e.ir(dst_ty), False)  # narrower: keep the low bits


def _make_cast(stock):
    def cast(self, input, dst_ty, fp_downcast_rounding=None, **kwargs):
        src_sca, dst_sca = input.type.scalar, dst_ty.scalar
        src = src_sca.name if src_sca.name in FLOAT_SOURCES else None
        dst = dst_sca.name if dst_sca.is_int() and not dst_sca.is_bool() else None
        # anything else, or options we do not model (stock raises on a rounding mode here), is stock's
        if src is None or dst not in _BITS or fp_downcast_rounding is not None or any(
                v is not None for v in kwargs.values()):
            return stock(self, input, dst_ty, fp_downcast_rounding, **kwargs)
        wide = input if src == "fp32" else stock(self, input, tl.float32)  # exact widening
        out_ty = input.type.with_element_ty(dst_sca) if input.type.is_block() else dst_sca
        return self.tensor(_gfx950_cast_value(self, wide, src, dst), out_ty)

    cast._mxfp4_fuzz_gfx950 = True
    return cast


class _RecordingBuilder:
    """An InterpreterBuilder that records the result width of each fp -> int it is asked for."""

    def __init__(self):
        from triton.runtime.interpreter import InterpreterBuilder

        self._inner, self.widths = InterpreterBuilder(), []

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name in ("create_fp_to_si", "create_fp_to_ui"):
            def record(src, dst_type, _attr=attr):
                self.widths.append(dst_type.scalar.primitive_bitwidth)
                return _attr(src, dst_type)

            return record
        return attr


_stock: dict = {}  # "cast" -> TritonSemantic.cast as it was before the frontend patch


def _stock_cast():
    from triton.language.semantic import TritonSemantic

    cast = TritonSemantic.cast
    return _stock["cast"] if getattr(cast, "_mxfp4_fuzz_gfx950", False) else cast


def _frontend_diverges() -> bool:
    """Stock lowers x.to(uint8) to one fptoui to i8: poison out of range, which each backend fills
    its own way (gfx950: low byte of a 32-bit saturating convert; NVIDIA: saturation at 8 bits)."""
    from triton.language.semantic import TritonSemantic
    from triton.runtime.interpreter import TensorHandle

    _triton_language()
    recorder = _RecordingBuilder()
    semantic = TritonSemantic(recorder)
    x = semantic.tensor(TensorHandle(np.array([-5.0], dtype=np.float32), tl.float32), tl.float32)
    _stock_cast()(semantic, x, tl.uint8)
    return any(width < 32 for width in recorder.widths)


PATCHED_CACHE = "gfx950-casts"  # the patched frontend's own Triton cache, a folder of the run's cache


def _cache_dir_for_patch() -> str:
    try:
        import triton

        base = triton.knobs.cache.dir
    except Exception:  # Triton without knobs: the environment variable or its default
        base = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    # a child process inherits the folder its parent's patch set: the same folder, not one more level
    # below it (a worker of a worker compiled into a cache of its own, and a check's worker and its
    # helpers each into another: kernels compiled again, and compile-once locks that never met)
    return base if os.path.basename(os.path.normpath(base)) == PATCHED_CACHE else os.path.join(base, PATCHED_CACHE)


def _apply_frontend():
    from triton.language.semantic import TritonSemantic

    _triton_language()
    _stock["cast"] = TritonSemantic.cast
    undo_cast = _swap(TritonSemantic, "cast", _make_cast(_stock["cast"]))
    # Triton's cache key does not see this patch: patched kernels get a cache of their own
    return _undo_all([undo_cast, _set_cache_dir(_cache_dir_for_patch())])


def _set_cache_dir(path: str):
    """Point TRITON_CACHE_DIR at ``path``; returns the function that puts the previous value back."""
    previous = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = path

    def undo():
        if previous is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = previous

    return undo


# ---------------------------------------------------------------------------------------------------
# float_to_int_interpreter: the builder's fp -> int as gfx950 lowers a bare fptosi/fptoui from fp32


def _interpreter_diverges() -> bool:
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    _triton_language()
    x = TensorHandle(np.array([np.nan, 1e10, -5.0], dtype=np.float32), tl.float32)
    with np.errstate(invalid="ignore"):
        got = InterpreterBuilder().create_fp_to_si(x, tl.int32).data
        got_u = InterpreterBuilder().create_fp_to_ui(x, tl.int32).data.view(np.uint32)
    return got.tolist() != [0, 2**31 - 1, -5] or int(got_u[2]) != 0


def _builder_source(handle) -> tuple[str, np.ndarray] | None:
    from reference.emulation.float_bits import bf16_bits_to_f32

    name = handle.dtype.scalar.name
    if name == "bf16":
        return "bf16", bf16_bits_to_f32(handle.data)  # stored as its uint16 bit pattern
    if name in ("fp32", "fp16"):
        return name, handle.data
    return None


def _apply_interpreter():
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    def convert(stock, signed: bool):
        def op(self, src, dst_type):
            source = _builder_source(src)
            d = dst_type.scalar
            if source is None or not d.is_int() or d.is_bool() or d.primitive_bitwidth not in (8, 16, 32, 64):
                return stock(self, src, dst_type)
            name, data = source
            # the builder's types are signless, the op says the signedness; the data carry it (numpy
            # then zero-extends an unsigned result, as a later zext must)
            dst = f"{'' if signed else 'u'}int{d.primitive_bitwidth}"
            return TensorHandle(gfx950_convert(data, "fp32" if name == "bf16" else name, dst), d)

        return op

    return _undo_all([_swap(InterpreterBuilder, "create_fp_to_si", convert(InterpreterBuilder.create_fp_to_si, True)),
                      _swap(InterpreterBuilder, "create_fp_to_ui", convert(InterpreterBuilder.create_fp_to_ui, False))])


# ---------------------------------------------------------------------------------------------------
# Registry, install/uninstall


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _on_amd() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return bool(torch.cuda.is_available() and getattr(torch.version, "hip", None))


PATCHES = (
    # 3.6: the divergence measured on the H200 (every negative -> 0); the cast's API read in its source
    Patch("float_to_int_frontend", "x.to(int type) from fp16/bf16/fp32 is one fptosi/fptoui, poison out of "
          "range: NVIDIA saturates at the target width, gfx950 keeps the low bits of a 32-bit (fp16: "
          "16-bit) saturating convert", ("3.6", "3.9"), _frontend_diverges, _apply_frontend),
    Patch("float_to_int_interpreter", "the interpreter's fptosi/fptoui are numpy astype (x86: 0x80000000 for "
          "NaN and out of range)", ("3.9",), _interpreter_diverges, _apply_interpreter),
)

_installed: dict = {}  # name -> uninstall


def install(names=None) -> list:
    """Install the patches this process needs (the interpreter one only where Triton interprets);
    nothing where torch runs on an AMD GPU (the hardware computes it). Idempotent; returns the names
    installed now."""
    if _on_amd():
        return []
    wanted = [p for p in PATCHES if p.name != "float_to_int_interpreter" or _interpreting()]
    return install_patches(wanted, _installed, names)


def uninstall(names=None) -> None:
    uninstall_patches(_installed, names)


def installed() -> list:
    return list(_installed)


# ---------------------------------------------------------------------------------------------------
# Probes: what this process computes (probe_values) and what gfx950 compiles to (isa_probe)


def _probe_kernel(x_ptr, u8_ptr, u8p_ptr, i8_ptr, i32_ptr, u32_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=0.0)
    tl.store(u8_ptr + o, x.to(tl.uint8), mask=m)
    tl.store(u8p_ptr + o, x.to(tl.uint8) + 127, mask=m)
    tl.store(i8_ptr + o, x.to(tl.int8), mask=m)
    tl.store(i32_ptr + o, x.to(tl.int32), mask=m)
    tl.store(u32_ptr + o, x.to(tl.uint32), mask=m)


def _cast_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    tl.store(y_ptr + o, x.to(y_ptr.dtype.element_ty), mask=m)


def _kernel(fn, interpret: bool):
    # a fresh kernel object per call: a compiled one must never come from before an install/uninstall
    if interpret:
        from triton.runtime.interpreter import InterpretedFunction

        return InterpretedFunction(fn)
    from triton.runtime.jit import JITFunction

    return JITFunction(fn)


def run_cast(values, src: str, dst: str, device: str = "cpu") -> np.ndarray:
    """``x.to(dst)`` by a Triton kernel on ``device`` (cpu: the interpreter) with what is installed."""
    import torch

    _triton_language()
    torch_src = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[src]
    torch_dst = getattr(torch, dst)
    x = torch.as_tensor(np.asarray(values, dtype=np.float64)).to(torch_src).to(device)
    y = torch.zeros(x.numel(), dtype=torch_dst, device=device)
    n = x.numel()
    block = 1 << max(4, (max(n, 1) - 1).bit_length())
    if device != "cpu":
        block = min(block, 1024)  # the interpreter runs one numpy block fastest; a GPU wants a grid
    _kernel(_cast_kernel, device == "cpu")[(-(-n // block),)](x, y, n, BLOCK=block)
    return y.cpu().numpy()


def probe_values(device: str = "cpu") -> dict:
    """{op: {input label: output}} for ``PROBE_OPS`` over ``PROBE_INPUTS`` (fp32), computed by a Triton
    kernel on ``device`` ("cpu": the interpreter; "cuda": compiled) with whatever is installed now."""
    import torch

    _triton_language()
    x = torch.tensor(PROBE_INPUTS, dtype=torch.float32, device=device)
    n = x.numel()
    outs = [torch.zeros(n, dtype=dt, device=device) for dt in
            (torch.uint8, torch.uint8, torch.int8, torch.int32, torch.uint32)]
    _kernel(_probe_kernel, device == "cpu")[(1,)](x, *outs, n, BLOCK=32)
    return {op: dict(zip(PROBE_LABELS, (int(v) for v in out.cpu().numpy().tolist())))
            for op, out in zip(PROBE_OPS, outs)}


_TRITON_PTR = {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "int8": "i8", "uint8": "u8", "int16": "i16",
               "uint16": "u16", "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64"}


def isa_probe(src: str | None = None, dst: str | None = None, stock: bool = True) -> dict:
    """AOT-compile ``x.to(dst)`` from ``src`` for gfx950 (no GPU needed; no ``src``: the kernel of
    ``probe_values``) and return its ``llir``, ``asm`` lines and instruction mnemonics. ``stock``: with
    Triton's own cast (what the runner runs), whatever is installed."""
    import tempfile

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.language.semantic import TritonSemantic
    from triton.runtime.jit import JITFunction

    _triton_language()
    if src is None:
        fn, signature = _probe_kernel, {"x_ptr": "*fp32", "u8_ptr": "*u8", "u8p_ptr": "*u8", "i8_ptr": "*i8",
                                        "i32_ptr": "*i32", "u32_ptr": "*u32", "n": "i32", "BLOCK": "constexpr"}
    else:
        fn, signature = _cast_kernel, {"x_ptr": "*" + _TRITON_PTR[src], "y_ptr": "*" + _TRITON_PTR[dst],
                                       "n": "i32", "BLOCK": "constexpr"}
    current = TritonSemantic.cast
    # a private cache: Triton's key would not tell a stock compile from a patched one
    with tempfile.TemporaryDirectory() as cache:
        restore_cache_dir = _set_cache_dir(cache)
        try:
            if stock:
                TritonSemantic.cast = _stock_cast()
            source = ASTSource(fn=JITFunction(fn), signature=signature, constexprs={"BLOCK": 64})
            compiled = triton.compile(source, target=GPUTarget("hip", "gfx950", 64),
                                      options={"enable_fp_fusion": True})
        finally:
            TritonSemantic.cast = current
            restore_cache_dir()
    lines = [line.strip() for line in compiled.asm["amdgcn"].splitlines()
             if line.startswith("\t") and not line.strip().startswith((".", ";"))]
    return {"llir": compiled.asm["llir"], "asm": lines,
            "instructions": [instruction_stem(line.split()[0]) for line in lines]}


def instructions_missing(sequence, found) -> list:
    """The instruction patterns of ``sequence`` (an ``INSTRUCTIONS`` or ``GFX950_EXPECTED`` entry) that
    no mnemonic in ``found`` matches; words that are not instructions ("high word 0") are skipped."""
    import fnmatch

    patterns = [token for item in sequence for token in item.split()[0].split("/")
                if token.startswith(("v_", "buffer_", "global_", "*_"))]
    return [p for p in patterns if not any(fnmatch.fnmatchcase(name, p) for name in found)]


def instruction_stem(name: str) -> str:
    """``v_cvt_i32_f32_e32`` -> ``v_cvt_i32_f32`` (the encoding suffix the assembler adds)."""
    for suffix in ("_e32", "_e64", "_sdwa", "_dpp"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name

