"""The CPU tier's Triton: switch the interpreter on where no GPU is visible, and make it compute what
compiled Triton computes.

Triton's interpreter (``TRITON_INTERPRET=1``) runs a kernel's Python with numpy. Where its numpy
differs from what a compiled kernel does on a GPU, a correct kernel gets wrong results on the CPU and
the suite would blame the kernel. Each divergence is repaired by one small, named patch below, applied
in our processes only (pytest and the submission worker). A patch is version-gated twice: by the
Triton versions it was checked on (``checked``) and by a probe (``diverges``) that shows the divergence
is still there. A Triton that fixes one turns its patch off by itself; a Triton newer than any we
checked still gets the patch only while its probe fails.

Patches (``PATCHES``; docs/interpreter_divergences.md has a minimal reproducer for each):

- ``bf16_conversions``: fp32/fp16/fp64/int -> bf16 truncated (and garbled subnormals); bf16 -> fp32
  garbled bf16 subnormals. Now: narrowing rounds to nearest even and keeps subnormals, widening is exact.
- ``scalar_compare_is_int1``: a comparison's handle kept its operands' type (int32, fp32), so a scalar
  comparison splatted into a block (``(offs < M) & (pid < n)``, aiter's ``(pid_n < n)[None, :]``) was an
  int32 block, and a mask of it raised "mask has unsupported dtype". Now every comparison is i1.
- ``bf16_atomics``: ``tl.atomic_add`` / ``atomic_max`` / ``atomic_min`` on bf16 raised "Unsupported data
  type". Now each active lane, in order, computes in fp32 and stores the bf16 rounded to nearest even
  (the H200 and gfx950 store a correctly rounded bf16 sum; the order of a GPU's lanes is not modelled).
  Each bf16 add is counted per address (``bf16_atomic_adds_per_element``): the oracle's bound for a
  split-K with bf16 atomics grows with the roundings each output element went through.
- ``bf16_arithmetic``: the interpreter stores bf16 as its uint16 bit pattern and numpy then computes on
  the bits (``x * y``, ``x < y``, ``tl.maximum``, ``tl.sum``, ``tl.dot``... on bf16 were garbage). Now
  each op widens exactly, computes in fp32 and rounds the result to nearest even, which is what a GPU
  gives for + - * / sqrt (fp32 carries more than 2p+2 bits, so the double rounding is innocuous).
- ``signed_zero_minmax``: ``tl.maximum(+0.0, -0.0)`` returned -0 (numpy's fmax keeps its first zero);
  compiled max returns +0 and min -0 (measured on the H200; LLVM's maxnum allows either).
- ``exp2_of_integers``: ``tl.exp2(127.0)`` in fp32 was 2^127 plus one ulp (numpy's float32 exp2; every
  other integer in [-149, 127] is exact); compiled exp2 of an integer is the exact power of two (H200,
  -126..127; it flushes subnormal results, which the oracle and this patch keep), and aiter's quantizer
  relies on it (``tl.exp2(-s)`` scales a group whose scale byte is 0 by 2^127). Now fp32 and fp64 exp2
  of an integer-valued input is the exact power of two; other inputs are left to numpy.
- ``elementwise_not``: Python ``not`` / ``and`` / ``or`` on a tensor are one truth value in the
  interpreter; the compiled frontend makes them elementwise (``__not__``, ``logical_and``/``_or``).
  Interpreted functions are rewritten so these call helpers that behave as compiled Triton does.
- ``device_call_restores_language``: a call of a ``@triton.jit`` function from inside a kernel patched
  ``triton.language`` and never put it back.

- ``autotune_without_benchmark``: ``@triton.autotune`` with several configs raised "0 active drivers"
  (it benchmarks); now the config ``set_autotune_choice(i)`` names runs (every config is a variant the
  runner may pick: callers run each), ``autotune_report()`` lists configs and the ones that ran, and
  ``triton.testing.do_bench`` runs its function once and returns without timing.

- ``compiled_frontend_check``: the interpreter runs kernels that compiled Triton rejects (a plain
  global read in ``@jit``, Python it cannot lower...). Each interpreted launch is also run through
  Triton's real frontend (AST -> TTIR for gfx950, no GPU needed; cached per kernel specialisation, a
  few ms), and a rejection raises ``FrontendRejects`` with Triton's message and line.

- ``null_pointer_faults``: a load or store through a null pointer plus an offset (a tensor with no
  elements has ``data_ptr()`` 0, which a launch passes on) ended the process with SIGSEGV; a GPU
  raises a memory access fault. Now it raises ``NullPointerFault`` ("an illegal memory access"), a
  device fault of the kernel that did it, naming the kernel's line.

- ``batched_launches`` (speed, not a divergence): a launch's independent programs run together, the
  program id a leading array axis, with a recorded fallback to one by one (``triton_batched.py``).

Compatibility shim (not a divergence of the interpreter: a frontend that is stricter than the one the
competition runner used; counted in ``shims_used()`` so a report can say it was needed):

- ``index_rank0_tensor``: triton 3.9 rejects ``t[None, :]`` on a 0-d tensor ("too many indices");
  3.3.1 to 3.8.0 accept it (shape [1]; checked in their wheels), and so did the competition runner's
  Triton, since aiter's own fp4_utils does it there.
"""
from __future__ import annotations

import ast
import functools
import os

import numpy as np

from reference.emulation.float_bits import (  # noqa: F401  (bf16_bits_to_f32, f32_to_bf16_bits: this module's API too)
    _to_bf16_bits_from_any,
    _to_f32_round_to_odd,
    bf16_bits_to_f32,
    f32_to_bf16_bits,
)
from reference.emulation.patch_registry import Patch, _swap, _undo_all, install_patches, uninstall_patches  # noqa: F401


def _gpu_visible() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return False
    return bool(torch.cuda.is_available())


def select_mode() -> bool:
    """Switch the interpreter on where no GPU is visible (before any ``@triton.jit`` decoration: Triton
    decides at decoration time); returns whether Triton interprets."""
    if not _gpu_visible():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


STOCK_ENV = "MXFP4_FUZZ_STOCK_TRITON"  # =1: leave the interpreter as Triton ships it (to compare, never to judge)


def activate() -> bool:
    """``select_mode()``, then the patches where Triton interprets, and gfx950's float -> integer conversions
    on every tier but AMD's own (``gfx950_casts``), unless $MXFP4_FUZZ_STOCK_TRITON=1; idempotent. Returns whether Triton interprets."""
    interpreting = select_mode()
    if interpreting and os.environ.get(STOCK_ENV) != "1":
        install()
    if os.environ.get(STOCK_ENV) != "1":  # float -> int conversions as gfx950 converts (cpu and nvidia tiers)
        from reference.emulation import gfx950_casts

        gfx950_casts.install()
    return interpreting


# ---------------------------------------------------------------------------------------------------
# The patch registry


_installed: dict = {}  # name -> uninstall
_shims_used: dict = {}  # shim name -> first "file:line" it was needed at


def install(names=None) -> list:
    """Install every (or the named) patch whose gate says this Triton needs it; idempotent. Returns
    the names installed now. Does nothing when Triton is not interpreting."""
    if os.environ.get("TRITON_INTERPRET", "0") != "1":
        return []
    return install_patches(PATCHES, _installed, names)


def install_autotune_variants() -> bool:
    """``autotune_without_benchmark`` on compiled Triton too (the submission worker on the NVIDIA tier):
    there the autotuner would time every config on NVIDIA, which says nothing of which one gfx950 picks,
    and timing cost seconds a shape (an autotuned real file spent 12 of its 27 s benchmarking on an
    H100). So, as on the CPU tier, ``set_autotune_choice(i)`` names the config that runs, each config is a
    variant the runner may run (correctness runs every one) and ``triton.testing.do_bench`` runs its
    function once, untimed. Idempotent; returns whether it installed it now."""
    if "autotune_without_benchmark" in _installed:
        return False
    _installed["autotune_without_benchmark"] = _apply_autotune_without_benchmark()
    return True


def uninstall(names=None) -> None:
    """Back to stock Triton (for the tests that show each divergence)."""
    uninstall_patches(_installed, names)
    _forget_rewritten_functions()


def installed() -> list:
    return list(_installed)


def shims_used() -> dict:
    """Compatibility shims that were needed since the last ``reset_shims()``: name -> where."""
    return dict(_shims_used)


def reset_shims() -> None:
    _shims_used.clear()


def _forget_rewritten_functions() -> None:
    # The interpreter caches each function's rewritten AST; a change of the rewriter must not be hidden.
    from triton.runtime.interpreter import InterpretedFunction

    InterpretedFunction.rewritten_fn.clear()


# ---------------------------------------------------------------------------------------------------
# bf16_conversions


def _builder():
    from triton.runtime.interpreter import InterpreterBuilder

    return InterpreterBuilder


def _handle(data, dtype):
    from triton.runtime.interpreter import TensorHandle

    return TensorHandle(data, dtype)


def _bf16_conversions_diverge() -> bool:
    import triton.language as tl

    b = _builder()()
    subnormal = _handle(np.array([0x0001], dtype=np.uint16), tl.bfloat16)  # 2^-133
    widened = b.cast_impl(subnormal, tl.float32).data.view(np.uint32)[0]
    halfway = _handle(np.array([1.01171875], dtype=np.float32), tl.float32)  # rounds up to 1.015625
    narrowed = b.cast_impl(halfway, tl.bfloat16).data[0]
    return int(widened) != 0x00010000 or int(narrowed) != 0x3F82


def _apply_bf16_conversions():
    import triton.language as tl

    builder = _builder()
    stock_cast, stock_fp_to_fp = builder.cast_impl, builder.create_fp_to_fp

    def cast_impl(self, src, dst_type):
        s, d = src.dtype.scalar, dst_type.scalar
        if s == d or not (s == tl.bfloat16 or d == tl.bfloat16) or s.is_fp8() or d.is_fp8():
            return stock_cast(self, src, dst_type)
        from triton.runtime.interpreter import _get_np_dtype

        if s == tl.bfloat16:
            # exact widening; to an integer type astype truncates toward zero as fptosi/fptoui do
            with np.errstate(over="ignore", invalid="ignore"):  # overflow to Inf is the conversion's result
                return _handle(bf16_bits_to_f32(src.data).astype(_get_np_dtype(d)), d)
        return _handle(_to_bf16_bits_from_any(src.data), d)

    def create_fp_to_fp(self, src, dst_type, rounding_mode):
        from triton._C.libtriton import ir

        s, d = src.dtype.scalar, dst_type.scalar
        if s.is_fp8() or d.is_fp8():
            return stock_fp_to_fp(self, src, dst_type, rounding_mode)
        rtz = rounding_mode == ir.ROUNDING_MODE.RTZ
        if d == tl.bfloat16 and s != tl.bfloat16:
            wide = src.data.astype(np.float32) if s != tl.float64 else _to_f32_round_to_odd(src.data)
            return _handle(f32_to_bf16_bits(wide, "rtz" if rtz else "rtne"), d)
        if s == tl.bfloat16 and d != tl.bfloat16:
            return cast_impl(self, src, dst_type)
        if rtz and d == tl.float16:
            wide = src.data.astype(np.float64)
            with np.errstate(over="ignore"):
                near = wide.astype(np.float16)
            step = (np.abs(near.astype(np.float64)) > np.abs(wide)) & np.isfinite(wide)
            bits = near.view(np.uint16).copy()
            bits[step] -= np.uint16(1)  # one ulp toward zero (magnitude bits, sign kept)
            return _handle(bits.view(np.float16), d)
        return stock_fp_to_fp(self, src, dst_type, rounding_mode)

    def get_bf16(self, value):
        return _handle(f32_to_bf16_bits(np.array([value], dtype=np.float32)), tl.bfloat16)

    undos = [_swap(builder, "cast_impl", cast_impl), _swap(builder, "create_fp_to_fp", create_fp_to_fp),
             _swap(builder, "get_bf16", get_bf16)]
    # the lambdas create_fp_ext/... call self.cast_impl, so they follow the swap
    return _undo_all(undos)


# ---------------------------------------------------------------------------------------------------
# scalar_compare_is_int1

_COMPARISONS = tuple(f"create_icmp{p}" for p in ("EQ", "NE", "SLT", "SLE", "SGT", "SGE", "ULT", "ULE", "UGT", "UGE")) + \
    tuple(f"create_fcmp{p}" for p in ("OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE", "UEQ",
                                      "UNE", "ORD", "UNO"))


def _scalar_compare_diverges() -> bool:
    import triton.language as tl

    b = _builder()()
    seven = _handle(np.array([7], dtype=np.int32), tl.int32)
    return b.create_icmpSLT(seven, seven).dtype != tl.int1


def _apply_scalar_compare_is_int1():
    import triton.language as tl

    builder = _builder()
    undos = []
    for name in _COMPARISONS:
        if not hasattr(builder, name):
            continue
        original = getattr(builder, name)

        # the stock handle keeps the operands' type (int32, fp32): a scalar comparison splatted into a
        # block (``(offs < M) & (pid < n)``, ``(pid_n < n)[None, :]``) then becomes an int32 block, and
        # a mask of it fails with "mask has unsupported dtype"; compiled Triton's i1 stays i1
        def compare(self, lhs, rhs, _original=original):
            result = _original(self, lhs, rhs)
            return _handle(result.data.astype(np.bool_), tl.int1)

        undos.append(_swap(builder, name, compare))
    return _undo_all(undos)


# ---------------------------------------------------------------------------------------------------
# bf16_atomics


def _bf16_atomics_diverge() -> bool:
    import triton.language as tl

    b = _builder()()
    target = np.zeros(1, dtype=np.uint16)
    pointer = _handle(np.array([target.ctypes.data], dtype=np.uint64), tl.pointer_type(tl.bfloat16))
    one = _handle(np.array([0x3F80], dtype=np.uint16), tl.bfloat16)
    try:
        from triton._C.libtriton import ir

        b.create_atomic_rmw(ir.ATOMIC_OP.FADD, pointer, one, _handle(np.array([True]), tl.int1),
                            ir.MEM_SEMANTIC.RELAXED, ir.MEM_SCOPE.GPU)
    except Exception:  # ValueError("Unsupported data type") from the C++ helper
        return True
    return int(target[0]) != 0x3F80


_bf16_adds: list = []  # address arrays of the bf16 atomic adds since the last reset


def bf16_atomic_adds_per_element() -> int:
    """The most bf16 atomic adds any one address received since ``reset_bf16_atomic_adds()`` (0: none)."""
    if not _bf16_adds:
        return 0
    _, counts = np.unique(np.concatenate(_bf16_adds), return_counts=True)
    return int(counts.max())


def reset_bf16_atomic_adds() -> None:
    _bf16_adds.clear()


def _apply_bf16_atomics():
    import ctypes

    import triton.language as tl
    from triton._C.libtriton import ir

    builder = _builder()
    stock = builder.create_atomic_rmw
    # bf16 operations an interpreted atomic_rmw computes in fp32, rounding the stored value to nearest
    # even (what a bf16 atomic add / CAS loop of fadd + cvt stores on a GPU)
    wide_ops = {ir.ATOMIC_OP.FADD: np.add, ir.ATOMIC_OP.MAX: np.fmax, ir.ATOMIC_OP.MIN: np.fmin}

    def apply(op, cells, values):
        with np.errstate(all="ignore"):
            wide = op(bf16_bits_to_f32(cells), bf16_bits_to_f32(values))
        return f32_to_bf16_bits(wide.astype(np.float32))

    def create_atomic_rmw(self, rmwOp, ptr, val, mask, sem, scope):
        if val.dtype.scalar != tl.bfloat16 or rmwOp not in wide_ops:
            return stock(self, rmwOp, ptr, val, mask, sem, scope)
        addresses = np.broadcast_to(ptr.data, val.data.shape).reshape(-1)
        values = val.data.reshape(-1)
        active = np.flatnonzero(np.broadcast_to(mask.data, val.data.shape).reshape(-1))
        old = np.zeros(values.shape, dtype=np.uint16)
        if rmwOp == ir.ATOMIC_OP.FADD:
            _bf16_adds.append(addresses[active].astype(np.uint64))
        if active.size == 0:
            return _handle(old.reshape(val.data.shape), tl.bfloat16)
        lanes = addresses[active].astype(np.uint64)
        low, high = int(lanes.min()), int(lanes.max())
        distinct = np.unique(lanes).size == lanes.size
        if distinct and not ((lanes - low) % 2).any() and high - low < 2**40:
            # lanes name distinct bf16 cells (a tile of the output): one numpy pass over a view of the range
            # they span (a view reads and writes only the cells it is indexed with)
            span = (high - low) // 2 + 1
            cells = np.frombuffer((ctypes.c_uint16 * span).from_address(low), dtype=np.uint16)
            index = ((lanes - low) // 2).astype(np.int64)
            old[active] = cells[index]
            cells[index] = apply(wide_ops[rmwOp], cells[index], values[active])
            return _handle(old.reshape(val.data.shape), tl.bfloat16)
        # one element after another, in order: two lanes naming one address both land, as atomics do
        for i in active:
            cell = ctypes.c_uint16.from_address(int(addresses[i]))
            old[i] = cell.value
            cell.value = int(apply(wide_ops[rmwOp], np.array([cell.value], np.uint16),
                                   np.array([values[i]], np.uint16))[0])
        return _handle(old.reshape(val.data.shape), tl.bfloat16)

    return _swap(builder, "create_atomic_rmw", create_atomic_rmw)


# ---------------------------------------------------------------------------------------------------
# bf16_arithmetic

# builder method -> index of the argument whose dtype the result has (None: a boolean result)
_FLOAT_OPS = {name: 0 for name in (
    "create_fadd", "create_fmul", "create_fdiv", "create_frem", "create_fsub", "create_fneg",
    "create_precise_divf", "create_approx_divf", "create_minimumf", "create_minnumf", "create_maximumf",
    "create_maxnumf", "create_clampf", "create_cos", "create_exp", "create_exp2", "create_floor",
    "create_ceil", "create_log", "create_log2", "create_precise_sqrt", "create_sqrt", "create_sin",
    "create_erf", "create_rsqrt")}
_FLOAT_OPS.update({"create_fma": 2, "create_dot": 2})
_FLOAT_OPS.update({f"create_fcmp{p}": None for p in (
    "OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE", "UEQ", "UNE", "ORD", "UNO")})


def _bf16_arithmetic_diverges() -> bool:
    import triton.language as tl

    b = _builder()()
    one_and_half = _handle(np.array([0x3FC0], dtype=np.uint16), tl.bfloat16)  # 1.5
    product = b.create_fmul(one_and_half, one_and_half)  # 2.25 = 0x4010
    return not (product.dtype == tl.bfloat16 and int(product.data[0]) == 0x4010)


def _widen_args(args):
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    out, any_bf16 = [], False
    for a in args:
        if isinstance(a, TensorHandle) and a.dtype.scalar == tl.bfloat16:
            any_bf16 = True
            a = TensorHandle(bf16_bits_to_f32(a.data), tl.float32)
        out.append(a)
    return out, any_bf16


def _bf16_op(original, result_arg):
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    @functools.wraps(original)
    def op(self, *args, **kwargs):
        wide, any_bf16 = _widen_args(args)
        if not any_bf16:
            return original(self, *args, **kwargs)
        with np.errstate(all="ignore"):
            result = original(self, *wide, **kwargs)
        narrow = (result_arg is not None and isinstance(result, TensorHandle) and result_arg < len(args)
                  and isinstance(args[result_arg], TensorHandle) and args[result_arg].dtype.scalar == tl.bfloat16)
        if narrow:
            return TensorHandle(f32_to_bf16_bits(result.data.astype(np.float32)), tl.bfloat16)
        return result

    return op


def _bf16_tree_sum(wide: np.ndarray, axis) -> np.ndarray:
    """Sum in bf16 as a GPU reduction does: pairwise, each partial rounded to bf16."""
    a = wide.reshape(-1) if axis is None else np.moveaxis(wide, axis, -1)
    while a.shape[-1] > 1:
        if a.shape[-1] % 2:
            a = np.concatenate([a, np.zeros(a.shape[:-1] + (1,), dtype=a.dtype)], axis=-1)
        with np.errstate(all="ignore"):
            a = bf16_bits_to_f32(f32_to_bf16_bits(a[..., 0::2] + a[..., 1::2]))
    return a[..., 0]


def _apply_bf16_arithmetic():
    import triton.language as tl
    from triton.runtime import interpreter

    builder = _builder()
    undos = []
    for name, result_arg in _FLOAT_OPS.items():
        if hasattr(builder, name):
            undos.append(_swap(builder, name, _bf16_op(getattr(builder, name), result_arg)))

    reduce_ops, scan_ops = interpreter.ReduceOps, interpreter.ScanOps
    stock_min_max, stock_sum = reduce_ops.min_max, reduce_ops.sum
    stock_cumsum, stock_cumprod = scan_ops.cumsum, scan_ops.cumprod

    def _is_bf16(t):
        return t.dtype.scalar == tl.bfloat16

    def _as_bf16_tensor(self, values, dtype):
        bits = f32_to_bf16_bits(np.asarray(values, dtype=np.float32))
        return self.to_tensor(bits if bits.shape else bits.item(), dtype)

    def min_max(self, input, val_reduce_op, idx_reduce_op=None):
        x = input[0] if isinstance(input, tuple) else input
        if not _is_bf16(x):
            return stock_min_max(self, input, val_reduce_op, idx_reduce_op)
        wide = bf16_bits_to_f32(x.handle.data)
        val = idx = None
        if val_reduce_op:
            val = _as_bf16_tensor(self, val_reduce_op(wide, axis=self.axis, keepdims=self.keep_dims), x.dtype)
        if idx_reduce_op:
            idx = self.to_tensor(idx_reduce_op(wide, axis=self.axis, keepdims=self.keep_dims), tl.int32)
        return (val, idx) if val is not None and idx is not None else (val if val is not None else idx)

    def sum_(self, input):
        if not _is_bf16(input):
            return stock_sum(self, input)
        total = _bf16_tree_sum(bf16_bits_to_f32(input.handle.data), self.axis)
        if self.keep_dims:
            total = np.expand_dims(total, tuple(range(input.handle.data.ndim)) if self.axis is None else self.axis)
        return _as_bf16_tensor(self, total, input.dtype)

    def _scan(stock, np_op):
        def scan(self, input):
            if not _is_bf16(input):
                return stock(self, input)
            wide = bf16_bits_to_f32(input.handle.data)
            out = np.moveaxis(wide, self.axis, 0).copy()
            for i in range(1, out.shape[0]):  # rounds each running value to bf16, as a bf16 scan does
                out[i] = bf16_bits_to_f32(f32_to_bf16_bits(np_op(out[i - 1], out[i])))
            return [_as_bf16_tensor(self, np.moveaxis(out, 0, self.axis), input.dtype)]

        return scan

    undos += [_swap(reduce_ops, "min_max", min_max), _swap(reduce_ops, "sum", sum_),
              _swap(scan_ops, "cumsum", _scan(stock_cumsum, np.add)),
              _swap(scan_ops, "cumprod", _scan(stock_cumprod, np.multiply))]
    return _undo_all(undos)


# ---------------------------------------------------------------------------------------------------
# signed_zero_minmax


def _signed_zero_minmax_diverges() -> bool:
    import triton.language as tl

    b = _builder()()
    zero, negative_zero = (_handle(np.array([v], dtype=np.float32), tl.float32) for v in (0.0, -0.0))
    return any(bool(np.signbit(op(*pair).data[0])) for op in (b.create_maxnumf, b.create_maximumf)
               for pair in ((zero, negative_zero), (negative_zero, zero)))


def _apply_signed_zero_minmax():
    builder = _builder()
    undos = []
    for name, zero in (("create_maxnumf", 0.0), ("create_maximumf", 0.0), ("create_minnumf", -0.0),
                       ("create_minimumf", -0.0)):
        original = getattr(builder, name)

        def op(self, lhs, rhs, _original=original, _zero=zero):
            result = _original(self, lhs, rhs)
            if result.data.dtype.kind != "f":
                return result
            # +0 and -0 compare equal: of the two, max is +0 and min is -0
            mixed = (lhs.data == 0) & (rhs.data == 0) & (np.signbit(lhs.data) != np.signbit(rhs.data))
            if np.any(mixed):
                data = np.where(mixed, np.array(_zero, dtype=result.data.dtype), result.data)
                return type(result)(data, result.dtype)
            return result

        undos.append(_swap(builder, name, op))
    return _undo_all(undos)


# ---------------------------------------------------------------------------------------------------
# exp2_of_integers


def _exp2_of_integers_diverges() -> bool:
    import triton.language as tl

    b = _builder()()
    result = b.create_exp2(_handle(np.array([127.0], dtype=np.float32), tl.float32))
    return int(result.data.view(np.uint32)[0]) != 0x7F000000


def _apply_exp2_of_integers():
    builder = _builder()
    stock = builder.create_exp2

    def create_exp2(self, arg):
        result = stock(self, arg)
        data = arg.data
        if data.dtype not in (np.float32, np.float64):  # bf16 (uint16 bits) is widened by bf16_arithmetic
            return result
        with np.errstate(all="ignore"):
            whole = np.isfinite(data) & (data == np.floor(data))
            if not np.any(whole):
                return result
            exponent = np.where(whole, np.clip(data, -2000, 2000), 0).astype(np.int32)
            exact = np.ldexp(np.ones_like(data), exponent)  # 0 below the subnormals, Inf above the max
        return _handle(np.where(whole, exact, result.data).astype(data.dtype), result.dtype)

    return _swap(builder, "create_exp2", create_exp2)


# ---------------------------------------------------------------------------------------------------
# elementwise_not


def tensor_not(value):
    """``not value`` as compiled Triton evaluates it: elementwise for tensors."""
    import triton.language as tl

    if isinstance(value, tl.tensor):
        try:
            return value.__not__()
        except Exception as error:  # e.g. `not` on an int32 tensor: the compiled frontend rejects it too
            raise FrontendRejects(f"{_kernel_line()}: `not` on a {value.dtype} tensor: compiled Triton "
                                  f"rejects this ({error})") from error
    return not value


def tensor_bool_op(kind: str, *thunks):
    """``a and b`` / ``a or b`` as compiled Triton evaluates them: a constexpr (or Python) operand
    short-circuits as in Python; tensor operands combine elementwise (``logical_and``/``logical_or``)."""
    import triton.language as tl

    tensors = []
    for thunk in thunks:
        value = thunk()
        if isinstance(value, tl.tensor):
            tensors.append(value)
            continue
        truth = bool(value.value if isinstance(value, tl.constexpr) else value)
        if (kind == "and" and not truth) or (kind == "or" and truth):
            return value
    if not tensors:
        return value
    result = tensors[0]
    for t in tensors[1:]:
        result = result.logical_and(t) if kind == "and" else result.logical_or(t)
    return result


class FrontendRejects(ValueError):
    """What the interpreter would accept but compiled Triton's frontend rejects, with the kernel's line."""


def _kernel_line() -> str:
    import sys

    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


_NOT_HELPER = "_mxfp4_fuzz_tensor_not"
_BOOL_HELPER = "_mxfp4_fuzz_tensor_bool_op"


class _NotRewriter(ast.NodeTransformer):
    """``not x`` -> helper(x); ``a and b`` -> helper("and", lambda: a, lambda: b)."""

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            call = ast.Call(func=ast.Name(id=_NOT_HELPER, ctx=ast.Load()), args=[node.operand], keywords=[])
            return ast.copy_location(call, node)
        return node

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        kind = "and" if isinstance(node.op, ast.And) else "or"
        lambdas = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                 defaults=[]), body=value) for value in node.values]
        call = ast.Call(func=ast.Name(id=_BOOL_HELPER, ctx=ast.Load()), args=[ast.Constant(kind), *lambdas],
                        keywords=[])
        return ast.copy_location(call, node)


def _elementwise_not_diverges() -> bool:
    from triton.runtime.interpreter import FunctionRewriter

    tree = FunctionRewriter.ast_transformer.visit(ast.parse("def f(x):\n    return not x\n"))
    return not any(isinstance(n, ast.Call) for n in ast.walk(tree))


def _apply_elementwise_not():
    from triton.runtime import interpreter

    stock = interpreter.FunctionRewriter.ast_transformer
    base = type(stock)

    class Transformer(_NotRewriter, base):  # ours first, then the interpreter's own rewrites
        def visit_UnaryOp(self, node):
            return _NotRewriter.visit_UnaryOp(self, node)

        def visit_BoolOp(self, node):
            return _NotRewriter.visit_BoolOp(self, node)

    # the rewriter copies the interpreter module's globals into each rewritten function's globals
    undos = [_swap(interpreter, _NOT_HELPER, tensor_not) if hasattr(interpreter, _NOT_HELPER)
             else _set_new(interpreter, _NOT_HELPER, tensor_not),
             _set_new(interpreter, _BOOL_HELPER, tensor_bool_op),
             _swap(interpreter.FunctionRewriter, "ast_transformer", Transformer())]
    _forget_rewritten_functions()
    return _undo_all(undos)


def _set_new(obj, name, value):
    setattr(obj, name, value)

    def undo():
        if hasattr(obj, name):
            delattr(obj, name)

    return undo


# ---------------------------------------------------------------------------------------------------
# device_call_restores_language


def _device_call_diverges() -> bool:
    import inspect

    from triton.runtime.interpreter import InterpretedFunction

    return "restore" not in inspect.getsource(InterpretedFunction.__call__)


def _apply_device_call_restores_language():
    import inspect
    import threading

    import triton.language as tl
    from triton.runtime import interpreter

    launch = threading.local()  # .active: a launch runs in this thread (it puts the language back at its end)

    def patched(lang) -> bool:  # its builtins are the interpreter's wrappers already
        return not (tl.core.is_builtin(lang.program_id) or tl.core.is_builtin(lang.tensor.__add__)
                    or (lang is tl and tl.core.is_builtin(tl.math.exp2)))

    def __call__(self, *args, **kwargs):
        # Inside a launch, a module the launch or an earlier device call patched is left as it is, and the
        # patches are put back once, when the launch ends: patching and restoring around every call cost
        # 0.4 ms per device call (tl.max and tl.sum are device calls), 20% of a small quantizer's program.
        inside = getattr(launch, "active", False)
        langs = [v for v in self.fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]
        if inside and langs and all(patched(lang) for lang in langs):
            scope = None
        else:
            scope = interpreter._patch_lang(self.fn)
            if inside:
                scope = None  # the launch's end puts the language back, this patch included
        fn = self.rewrite()
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise interpreter.InterpreterError(repr(e)) from e
        finally:
            if scope is not None:
                scope.restore()  # outside a launch: back to the patches of whoever called

    stock_run = interpreter.InterpretedFunction.run

    def run(self, *args, **kwargs):
        outer = getattr(launch, "active", False)
        launch.active = True
        # The launch's own patches and its device calls' overlap (both set tl.core.reduce): undoing them
        # in the wrong order would leave a patch behind, so the language is put back as it was before.
        before = _language_snapshot()
        try:
            return stock_run(self, *args, **kwargs)
        finally:
            launch.active = outer
            _put_back_language(before)

    return _undo_all([_swap(interpreter.InterpretedFunction, "__call__", __call__),
                      _swap(interpreter.InterpretedFunction, "run", run)])


# ---------------------------------------------------------------------------------------------------
# autotune_without_benchmark

# Which config an autotuned kernel runs in the interpreter: the GPU picks the fastest, which the CPU
# cannot know, so every config is a variant the runner may use. ``set_autotune_choice(i)`` makes each
# autotuned kernel take its config i (mod its number of configs); ``autotune_report()`` lists, per
# kernel, its configs and the ones that ran, so a caller can run each of them.
_autotune = {"choice": 0, "kernels": {}}


def set_autotune_choice(index: int) -> None:
    _autotune["choice"] = int(index)


def autotune_report() -> dict:
    """kernel name -> {"configs": [str, ...], "ran": sorted indices}."""
    return {name: {"configs": list(k["configs"]), "ran": sorted(k["ran"])} for name, k in _autotune["kernels"].items()}


def reset_autotune_report() -> None:
    _autotune["kernels"].clear()


def _autotune_diverges() -> bool:
    import triton

    try:
        triton.runtime.driver.active.get_benchmarker()
    except Exception:  # "0 active drivers": the interpreter has no device to benchmark on
        return True
    return False


def _apply_autotune_without_benchmark():
    import triton
    from triton.runtime.autotuner import Autotuner

    def _bench(self, *args, config, **meta):
        """No timing on the CPU: the chosen config gets 0, the others 1, so the autotuner's own logic
        (keys, cache, pruning, hooks) picks it."""
        configs = list(self.configs)
        name = getattr(self.base_fn, "__name__", "kernel")
        entry = _autotune["kernels"].setdefault(name, {"configs": [str(c) for c in configs], "ran": set()})
        chosen = _autotune["choice"] % len(configs)
        index = next((i for i, c in enumerate(configs) if c is config), None)
        if index == chosen:
            entry["ran"].add(index)
            return 0.0
        return 1.0

    def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
        fn()  # once, for its effects; a CPU time says nothing about the GPU
        return [1.0] * len(quantiles) if quantiles else 1.0

    stock_run = Autotuner.run

    def run(self, *args, **kwargs):
        if getattr(self, "_mxfp4_fuzz_choice", None) != _autotune["choice"]:
            self.cache.clear()  # a new choice re-"tunes": the cached best config was the old choice
            self._mxfp4_fuzz_choice = _autotune["choice"]
        return stock_run(self, *args, **kwargs)

    undos = [_swap(Autotuner, "_bench", _bench), _swap(Autotuner, "run", run),
             _swap(triton.testing, "do_bench", do_bench)]
    return _undo_all(undos)


# ---------------------------------------------------------------------------------------------------
# compiled_frontend_check

FRONTEND_TARGET = ("hip", "gfx950", 64)  # the runner's GPU; only Triton's frontend (AST -> TTIR) runs
_frontend = {"cache": {}, "jit": {}}


def _frontend_context():
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    target = GPUTarget(*FRONTEND_TARGET)
    backend = make_backend(target)
    options = backend.parse_options({"enable_fp_fusion": True})  # explicit: Triton 3.9 warns on the default
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    return target, backend, options, context


def _frontend_check_diverges() -> bool:
    """The interpreter never runs the compiled frontend; the check needs Triton's AMD backend."""
    try:
        _frontend_context()
    except Exception:
        return False
    return True


def _signature_of(fn, args, kwargs):
    """(signature, constexprs) as a launch would specialise them, or None when an argument is of a kind
    this check does not model (then the launch is not checked)."""
    import inspect

    import triton
    import triton.language as tl

    params = list(inspect.signature(fn).parameters.values())
    bound = dict(zip([p.name for p in params], args))
    bound.update({k: v for k, v in kwargs.items() if k in {p.name for p in params}})
    signature, constexprs = {}, {}
    for p in params:
        value = bound.get(p.name, p.default)
        if value is inspect.Parameter.empty:
            return None
        annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
        if "constexpr" in str(annotation) or isinstance(value, tl.constexpr) or value is None \
                or isinstance(value, (tl.dtype, str)):
            signature[p.name] = "constexpr"
            constexprs[p.name] = value.value if isinstance(value, tl.constexpr) else value
            continue
        try:
            signature[p.name] = triton.runtime.jit.mangle_type(value)
        except Exception:
            return None
    return signature, constexprs


def _swap_in_jit_functions(fn):
    """The frontend calls device functions as JITFunctions; in interpreter mode the kernel's module (and
    the modules it reaches through globals) hold InterpretedFunctions. Swap them while compiling."""
    import types

    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    import sys

    import triton.language as tl

    # triton.language's own @jit functions (tl.max, tl.sum, tl.cdiv...) are InterpretedFunctions too
    namespaces = [fn.__globals__] + [vars(m) for name, m in list(sys.modules.items())
                                     if m is not None and name.startswith("triton.language")]
    seen, swapped = set(), []
    while namespaces:
        ns = namespaces.pop()
        if id(ns) in seen:
            continue
        seen.add(id(ns))
        for name, value in list(ns.items()):
            if isinstance(value, InterpretedFunction):
                jit = _frontend["jit"].setdefault(value.fn, JITFunction(value.fn))
                swapped.append((ns, name, value))
                ns[name] = jit
                namespaces.append(value.fn.__globals__)
            elif isinstance(value, types.ModuleType) and not value.__name__.startswith(("triton", "torch", "numpy")):
                namespaces.append(vars(value))
    for name, value in list(vars(tl.core.tensor).items()):  # tensor methods: x.max(), x.to(...)...
        if isinstance(value, InterpretedFunction):
            swapped.append((tl.core.tensor, name, value))
    for cls, name, value in [s for s in swapped if not isinstance(s[0], dict)]:
        setattr(cls, name, _frontend["jit"].setdefault(value.fn, JITFunction(value.fn)))
    return swapped


def check_compiled_frontend(fn, args, kwargs):
    """Raise FrontendRejects when Triton's compiled frontend rejects this launch of ``fn``."""
    import hashlib
    import inspect

    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    spec = _signature_of(fn, args, kwargs)
    if spec is None:
        return
    signature, constexprs = spec
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return
    key = (fn.__code__.co_filename, fn.__qualname__, hashlib.sha1(source.encode()).hexdigest(),
           tuple(signature.items()), tuple((k, repr(v)) for k, v in constexprs.items()))
    if key not in _frontend["cache"]:
        _frontend["cache"][key] = None
        swapped = _swap_in_jit_functions(fn)
        try:
            target, backend, options, context = _frontend_context()
            src = ASTSource(fn=_frontend["jit"].setdefault(fn, JITFunction(fn)), signature=signature,
                            constexprs=constexprs)
            src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(),
                        context)
        except Exception as error:
            # CompilationError and its kinds (a failed tl.static_assert is CompileTimeAssertionFailure)
            if any(kind.__name__ == "CompilationError" for kind in type(error).__mro__):
                _frontend["cache"][key] = str(error)
        finally:
            for ns, name, value in reversed(swapped):
                if isinstance(ns, dict):
                    ns[name] = value
                else:
                    setattr(ns, name, value)
    message = _frontend["cache"][key]
    if message:
        import re

        lines, start = inspect.getsourcelines(fn)
        def_line = start + next((i for i, text in enumerate(lines) if text.lstrip().startswith("def ")), 0)
        at = re.match(r"at (\d+):", message)
        where = f"{fn.__code__.co_filename}:{def_line + int(at.group(1)) - 1 if at else def_line}"
        raise FrontendRejects(f"{where}: kernel {fn.__name__}: "
                              f"Triton's compiled frontend rejects it for {FRONTEND_TARGET[1]}, so it cannot "
                              f"run on the GPU although the interpreter runs it:\n{message}")


def _language_objects():
    import triton.language as tl

    return (tl, tl.core, tl.math, tl.standard, tl.core.tensor, tl.core.tensor_descriptor_base)


def _language_snapshot() -> list:
    return [(obj, dict(vars(obj))) for obj in _language_objects()]


def _put_back_language(snapshot: list) -> None:
    """Every name of ``snapshot`` bound as it was; names added since (the interpreter's helpers, which
    its rewritten functions look up in a module's globals) stay."""
    for obj, original in snapshot:
        current = vars(obj)
        for name, value in original.items():
            if not name.startswith("__") and current.get(name) is not value:
                setattr(obj, name, value)


def _restore_language() -> None:
    """Put back triton.language as it was at install time: the interpreter's launch patches must never be
    what the compiled frontend sees (stock Triton leaks some after device-function calls)."""
    _put_back_language(_frontend["language"])


def _apply_compiled_frontend_check():
    from triton.runtime.interpreter import InterpretedFunction

    stock_run = InterpretedFunction.run
    # first install only: later ones (after an uninstall for a stock comparison) may see leaked patches
    _frontend.setdefault("language", _language_snapshot())

    def run(self, *args, grid, warmup, **kwargs):
        if not warmup:
            _restore_language()
            check_compiled_frontend(self.fn, args, kwargs)
        return stock_run(self, *args, grid=grid, warmup=warmup, **kwargs)

    return _swap(InterpretedFunction, "run", run)


# ---------------------------------------------------------------------------------------------------
# index_rank0_tensor (compatibility shim)


def _rank0_index_rejected() -> bool:
    import inspect

    import triton.language as tl

    return "too many indices" in inspect.getsource(tl.core.tensor.__getitem__)


def _caller_site() -> str:
    import sys

    frame = sys._getframe(2)
    while frame is not None and ("/triton/" in frame.f_code.co_filename
                                 or frame.f_code.co_filename == __file__):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"


def _interpreter_handle():
    from triton.runtime.interpreter import TensorHandle

    return TensorHandle


def _apply_index_rank0_tensor():
    import triton.language as tl

    tensor = tl.core.tensor
    stock = tensor.__getitem__

    def __getitem__(self, slices, _semantic=None):
        if len(self.shape) == 0:
            items = slices.values if isinstance(slices, tl.tuple) else slices
            items = list(items) if isinstance(items, (tuple, list)) else [items]
            is_slice = [isinstance(s, (slice, tl.core.slice)) for s in items]  # Python's or the frontend's
            if any(is_slice):  # the runner's Triton ignored ':' beyond the rank: keep only the Nones
                if isinstance(self.handle, _interpreter_handle()):  # interpreted (batched too): the kernel's frame is on the stack
                    _shims_used.setdefault("index_rank0_tensor", _caller_site())
                ret = self
                for dim in range(len(items) - sum(is_slice)):
                    ret = _semantic.expand_dims(ret, dim)
                return ret
        return stock(self, slices, _semantic=_semantic)

    return _swap(tensor, "__getitem__", tl.core.builtin(__getitem__))


# ---------------------------------------------------------------------------------------------------
# overflow_check_without_asserts


def _overflow_check_runs() -> bool:
    from triton.runtime import interpreter

    options = interpreter.interpreter_builder.options
    return bool(options.sanitize_overflow) and not options.debug


def _apply_overflow_check_without_asserts():
    """A speed patch, not a value patch: the result of the check only ever reached ``device_assert``,
    which returns without asserting when ``debug`` is off (always, in the interpreter). Measured on a
    real file's per-group quantizer (2-core box): 10.8 -> 6.5 ms per program."""
    import dataclasses

    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    stock = builder.options
    builder.options = dataclasses.replace(stock, sanitize_overflow=False)

    def undo():
        builder.options = stock

    return undo


# ---------------------------------------------------------------------------------------------------
# null_pointer_faults

NULL_PAGE = 1 << 16  # addresses below this are a null pointer plus an offset (no process maps them)
# our launch machinery, whose frames stand between a kernel's statement and the interpreter's load
_MACHINERY = frozenset({__file__, os.path.join(os.path.dirname(__file__), "triton_batched.py")})


class NullPointerFault(RuntimeError):
    """A kernel's load or store through a null pointer, as a GPU reports it: a memory access fault the
    program can catch and report, where the interpreter's raw read would end the process (SIGSEGV)."""


def _null_pointers_fault_the_process() -> bool:
    """Not probed: the interpreter's loads and stores dereference raw addresses in C++, so a null base
    always ends the process (a probe would have to crash one). The divergence is the process's death."""
    return True


def _kernel_site() -> str:
    """file:line of the innermost frame that is neither Triton's nor our interpreter machinery: the
    kernel's statement that loaded or stored."""
    import sys

    import triton

    package = os.path.dirname(triton.__file__) + os.sep
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(package) and name not in _MACHINERY:
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "a kernel"


class _NullGuardedMemory:
    """Triton's C++ interpreter module with ``load`` and ``store`` refusing active addresses in the null
    page. The check costs one min over the pointers; only a block that has such a pointer looks at its
    mask (a masked-off null pointer is never dereferenced, on a GPU either)."""

    def __init__(self, raw):
        self._raw = raw

    def __getattr__(self, name):
        return getattr(self._raw, name)

    @staticmethod
    def _check(ptrs, mask, what: str) -> None:
        ptrs = np.asarray(ptrs)
        if not ptrs.size or ptrs.min() >= NULL_PAGE:
            return
        active = ptrs[np.broadcast_to(np.asarray(mask, dtype=bool), ptrs.shape)]
        if active.size and active.min() < NULL_PAGE:
            raise NullPointerFault(
                f"an illegal memory access was encountered (the CPU tier's model of the GPU fault): {_kernel_site()} "
                f"{what} address {int(active.min()):#x}, a null pointer plus an offset. A tensor with no elements "
                f"has data_ptr() 0 (torch, on every device) and a launch passes that pointer to the kernel as is, "
                f"so a GPU faults there too")

    def load(self, ptrs, mask, other, dtype):
        self._check(ptrs, mask, "loads from")
        return self._raw.load(ptrs, mask, other, dtype)

    def store(self, ptrs, value, mask):
        self._check(ptrs, mask, "stores to")
        return self._raw.store(ptrs, value, mask)


def _apply_null_pointer_faults():
    from triton.runtime import interpreter

    stock = interpreter._interpreter
    interpreter._interpreter = _NullGuardedMemory(stock)

    def undo():
        interpreter._interpreter = stock

    return undo


# ---------------------------------------------------------------------------------------------------
# batched_launches (a speed patch: triton_batched.py)


def _launches_run_one_program_at_a_time() -> bool:
    from reference.emulation import triton_batched

    return triton_batched.stock_loop_runs_each_program()


def _apply_batched_launches():
    from reference.emulation import triton_batched

    return triton_batched.install()


PATCHES = (
    Patch("bf16_conversions", "fp32 -> bf16 truncates and garbles subnormals; bf16 -> fp32 garbles subnormals",
          ("3.5", "3.6", "3.8", "3.9"), _bf16_conversions_diverge, _apply_bf16_conversions),
    # before bf16_arithmetic, whose widening wrapper then calls it on fp32
    Patch("signed_zero_minmax", "tl.maximum(+0, -0) is -0 (numpy); compiled max returns +0 and min -0",
          ("3.9",), _signed_zero_minmax_diverges, _apply_signed_zero_minmax),
    # before bf16_arithmetic too, whose widening wrapper then calls it on fp32
    Patch("exp2_of_integers", "tl.exp2(127.0) is 2^127 + 1 ulp (numpy's float32 exp2); compiled: exactly 2^127",
          ("3.9",), _exp2_of_integers_diverges, _apply_exp2_of_integers),
    Patch("scalar_compare_is_int1", "a comparison's result keeps its operands' type: a scalar one broadcast into "
          "a block is an int32 block, and a mask of it raises 'mask has unsupported dtype'",
          ("3.9",), _scalar_compare_diverges, _apply_scalar_compare_is_int1),
    Patch("bf16_atomics", "tl.atomic_add/max/min on bf16 raise 'Unsupported data type'; a GPU adds in fp32 and "
          "stores the bf16 rounded to nearest even", ("3.9",), _bf16_atomics_diverge, _apply_bf16_atomics),
    Patch("bf16_arithmetic", "bf16 arithmetic, comparisons, reductions and dot run numpy on the uint16 bits",
          ("3.9",), _bf16_arithmetic_diverges, _apply_bf16_arithmetic),
    Patch("elementwise_not", "Python not/and/or on a tensor give one truth value, not an elementwise result",
          ("3.9",), _elementwise_not_diverges, _apply_elementwise_not),
    Patch("device_call_restores_language", "a device-function call leaves triton.language patched",
          ("3.9",), _device_call_diverges, _apply_device_call_restores_language),
    Patch("autotune_without_benchmark", "@triton.autotune with several configs needs a GPU to time them",
          ("3.9",), _autotune_diverges, _apply_autotune_without_benchmark),
    Patch("index_rank0_tensor", "compat shim: t[None, :] on a 0-d tensor (accepted by the runner's Triton)",
          ("3.9",), _rank0_index_rejected, _apply_index_rank0_tensor),
    Patch("overflow_check_without_asserts", "every integer add/sub/mul is also computed in int64 and range-"
          "checked for a device_assert that, with debug off, asserts nothing (compiled Triton drops it): about "
          "40% of an integer-heavy kernel's interpreted time", ("3.9",), _overflow_check_runs,
          _apply_overflow_check_without_asserts),
    Patch("null_pointer_faults", "a load or store through a null pointer (an empty tensor's data_ptr() is 0) "
          "ends the process with SIGSEGV; a GPU reports a memory access fault the run can attribute",
          ("3.9",), _null_pointers_fault_the_process, _apply_null_pointer_faults),
    Patch("batched_launches", "a speed patch, not a divergence: the interpreter runs a launch's programs one by "
          "one; independent programs run together, bit for bit the same ($MXFP4_FUZZ_BATCHED=0: off)",
          ("3.9",), _launches_run_one_program_at_a_time, _apply_batched_launches),
    # last: it snapshots triton.language with the shims above in place
    Patch("compiled_frontend_check", "the interpreter runs kernels the compiled frontend rejects",
          ("3.9",), _frontend_check_diverges, _apply_compiled_frontend_check),
)
