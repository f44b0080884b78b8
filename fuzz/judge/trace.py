"""Path trace: which kernel paths, aiter functions and Triton kernels (with their constexpr config and
grid) ran while a subject was called: our ``kernels`` dispatcher or a submission's ``custom_kernel``.

    with trace_calls() as trace:
        y = subject(data)
    print(trace.render())
    # path fused -> BM16xBN64xBK256 splits=1 w4
    #   fused_mxfp4_gemm_kernel[grid=(1,1)] BLOCK_M=16 BLOCK_N=64 BLOCK_K=256 PARTIALS=False ... K=256 SPLIT_K=256 num_warps=4

Hooks, all removed on exit (nothing stays patched, even when the block raises):
* Triton launches: ``JITFunction.run`` (compiled) and ``InterpretedFunction.run`` (TRITON_INTERPRET=1,
  where ``@triton.jit`` returns an InterpretedFunction), so autotuned/heuristic kernels are seen with
  their final config. Kernel name, resolved grid, constexpr arguments, runtime int arguments named in
  capitals (shapes and stripe lengths that are deliberately not constexprs: M, K, SPLIT_K) and
  launch options are recorded.
* aiter (real or emulated): every public callable whose name matches AITER_NAMES (gemm, quant,
  shuffle) on an ``aiter.*`` module is wrapped and rebound wherever a loaded module holds it
  (``aiter.gemm_a4w4``, and a submission's own ``from aiter import gemm_a4w4``). aiter modules first
  imported inside the block are picked up through an ``__import__`` hook.
* Kernel paths: ``FunctionPath.run`` and ``FaultyPath.run`` (with the injected fault's text).

Not seen: HIP/C++ extensions (load_inline, ctypes), torch.ops custom ops, aiter functions held in
closures or containers or imported by ``importlib.import_module`` and called before any other import
or launch. Launches from other threads while a trace is open are recorded too.
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import re
import sys
import sysconfig
import time
import types
from dataclasses import dataclass, field, replace

import torch
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import JITFunction, KernelInterface

from kernels.faults import FaultyPath
from kernels.path import FunctionPath

AITER_NAMES = re.compile(r"gemm|quant|shuffle")
AITER_PREFIXES = ("aiter",)
# Libraries whose modules never hold a reference to an aiter function: not scanned when the trace binds
# and unbinds its wrappers (three quarters of a test process's module attributes are theirs, and the
# two scans ran on every traced call: ~30 ms on the 2-core box). The standard library is skipped too,
# recognised by its name *and* its location, so a submission named like a stdlib module is still scanned.
NEVER_HOLD_AITER = frozenset({"torch", "triton", "numpy", "hypothesis", "_pytest", "pytest", "pluggy", "sympy",
                              "mpmath", "xdist", "execnet", "pytest_benchmark"})
_STDLIB_DIRS = tuple({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")})
_DTYPES = {
    getattr(torch, name): short for name, short in [
        ("bfloat16", "bf16"), ("float16", "f16"), ("float32", "f32"), ("float64", "f64"), ("uint8", "u8"),
        ("int8", "i8"), ("int32", "i32"), ("int64", "i64"), ("uint16", "u16"),
        ("float4_e2m1fn_x2", "fp4x2"), ("float8_e8m0fnu", "e8m0"),  # torch >= 2.8
    ] if hasattr(torch, name)
}


@dataclass
class Event:
    kind: str  # "path" | "aiter" | "triton"
    name: str
    depth: int
    args: str = ""  # aiter: argument summary
    grid: tuple | None = None  # triton
    constexprs: dict = field(default_factory=dict)  # triton
    scalars: dict = field(default_factory=dict)  # triton: runtime int arguments named in capitals (M, K, SPLIT_K, ...)
    options: dict = field(default_factory=dict)  # triton launch options (num_warps, ...)
    atomic_adds: tuple = ()  # triton, compiled: element types of the kernel's float atomic adds ("bf16", "f32")
    detail: str = ""  # path: injected fault; served config
    result: str = ""
    error: str | None = None
    elapsed_s: float | None = None

    def render(self) -> str:
        pad = "  " * self.depth
        if self.kind == "triton":
            grid = "?" if self.grid is None else "(" + ",".join(map(str, self.grid)) + ("," if len(self.grid) == 1 else "") + ")"
            conf = " ".join(f"{k}={_fmt(v)}" for k, v in {**self.constexprs, **self.scalars, **self.options}.items())
            text = f"{self.name}[grid={grid}] {conf}".rstrip()
        elif self.kind == "aiter":
            text = f"aiter {self.name}({self.args})" + (f" -> {self.result}" if self.result else "")
        else:
            text = f"path {self.name}" + (f" [{self.detail}]" if self.detail else "") + (f" -> {self.result}" if self.result else "")
        return pad + text + (f" !! {self.error}" if self.error else "")


@dataclass
class Trace:
    events: list = field(default_factory=list)
    base_depth: int = 0

    def render(self) -> str:
        """One line per call, nested calls indented."""
        top = min((e.depth for e in self.events), default=0)  # a trace opened inside another starts at 0
        return "\n".join(replace(e, depth=e.depth - top).render() for e in self.events)

    def of(self, kind: str) -> list:
        return [e for e in self.events if e.kind == kind]

    def names(self, kind: str) -> list:
        return [e.name for e in self.of(kind)]


def _fmt(v) -> str:
    if isinstance(v, str):
        return v if v and v.strip() == v else repr(v)
    return str(v)


def _summary(v) -> str:
    if isinstance(v, torch.Tensor):
        return f"{_DTYPES.get(v.dtype, str(v.dtype).replace('torch.', ''))}[{','.join(map(str, v.shape))}]"
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(map(_summary, v)) + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_summary(x)}" for k, x in v.items()) + "}"
    text = _fmt(v) if not isinstance(v, torch.dtype) else _DTYPES.get(v, str(v))
    return text if len(text) <= 60 else text[:57] + "..."


# --- shared hook state: installed while at least one trace is open ----------------------------------

# A frame of this module is never a launch site (reference/emulation/cuda_backend_hook.outside_launch_path):
# its hooks wrap Triton's launch path, and stay installed between traces
LAUNCH_WRAPPER = True
_active: list[Trace] = []
_depth = 0
_originals: dict = {}  # id(original callable) -> (original, wrapper)
_wrapped: dict = {}  # id(wrapper) -> original
_saved: dict = {}  # (owner, attr) -> original attribute, for class and builtins hooks
_modules_seen = 0
_import_depth = 0  # __import__ calls in progress: the modules they are loading may be half-executed


def _compiling() -> bool:
    """Dynamo is tracing the call (torch.compile): the hooks step aside, so nothing of ours (a clock, a
    list append) enters the file's graph; with ``fullgraph=True`` Dynamo would reject it, and on the
    runner there is nothing of ours to reject. The compiled call's own run is not recorded either."""
    is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(is_compiling and is_compiling())


def _record(event: Event, thunk):
    """Append ``event`` to every open trace, run ``thunk`` one level deeper, note time and error."""
    global _depth
    if _compiling():
        return thunk()  # forwards
    _catch_up()
    for trace in _active:
        trace.events.append(event)
    event.depth = max(0, _depth - (_active[0].base_depth if _active else 0))
    _depth += 1
    start = time.perf_counter()
    try:
        return thunk()  # forwards
    except BaseException as exc:
        message = f"{type(exc).__name__}: {exc}"
        event.error = message if len(message) <= 200 else message[:197] + "..."
        raise
    finally:
        event.elapsed_s = time.perf_counter() - start
        _depth -= 1


def _constexpr_names(fn) -> set:
    try:
        annotations = inspect.get_annotations(fn)
    except Exception:  # a callable without annotations records no constexprs rather than failing the launch
        return set()
    return {name for name, ann in annotations.items() if "constexpr" in str(ann)}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _launch_hook(original):
    @functools.wraps(original)
    def run(self, *args, grid, warmup, **kwargs):
        if warmup or not _active or _compiling():
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)  # forwards
        fn = self.fn
        params = inspect.signature(fn).parameters
        try:
            bound = inspect.signature(fn).bind(*args, **{k: v for k, v in kwargs.items() if k in params})
            bound.apply_defaults()
            named = dict(bound.arguments)
        except TypeError:
            named = dict(zip(params, args), **{k: v for k, v in kwargs.items() if k in params})
        try:
            resolved = tuple(grid(named) if callable(grid) else grid)
        except Exception:  # the launch itself will report a bad grid; the trace just shows "?"
            resolved = None
        const = _constexpr_names(fn)
        event = Event("triton", fn.__name__, 0, grid=resolved,
                      constexprs={k: v for k, v in named.items() if k in const},
                      scalars={k: v for k, v in named.items() if k not in const and k.isupper() and _is_int(v)},
                      options={k: v for k, v in kwargs.items() if k not in params})
        kernel = _record(event, lambda: original(self, *args, grid=grid, warmup=warmup, **kwargs))  # forwards
        event.atomic_adds = float_atomic_adds(kernel)
        return kernel

    return run


_ATOMIC_FADD = re.compile(r"tt\.atomic_rmw fadd\b.*?!tt\.ptr<(\w+)>")
_atomic_adds_of: dict = {}  # compiled kernel's hash -> float_atomic_adds


def float_atomic_adds(kernel) -> tuple:
    """The element types a compiled kernel's float atomic adds write, read from its TTIR (``()`` for an
    interpreted launch or a kernel without them). A GPU orders atomics as they arrive: such a kernel's
    sums may differ from run to run, and a bf16 add rounds every running sum."""
    asm = getattr(kernel, "asm", None)
    try:
        ttir = asm["ttir"]
    except Exception:  # not a compiled kernel (an interpreted launch returns none), or no TTIR kept
        return ()
    key = getattr(kernel, "hash", None) or id(kernel)
    if key not in _atomic_adds_of:
        _atomic_adds_of[key] = tuple(sorted(set(_ATOMIC_FADD.findall(str(ttir)))))
    return _atomic_adds_of[key]


def _path_hook(original):
    @functools.wraps(original)
    def run(self, data):
        if not _active:
            return original(self, data)  # forwards
        fault = getattr(self, "fault", None)
        event = Event("path", self.name, 0, detail=f"fault {fault}" if fault is not None else "")

        def call():
            y, info = original(self, data)  # forwards
            event.result = info.config or info.path
            return y, info

        return _record(event, call)  # forwards

    return run


def _aiter_wrapper(fn, name: str):
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _active:
            return fn(*args, **kwargs)  # forwards
        try:
            named = signature.bind(*args, **kwargs).arguments.items()
            text = ", ".join(f"{k}={_summary(v)}" for k, v in named)
        except (AttributeError, TypeError):
            text = ", ".join([_summary(a) for a in args] + [f"{k}={_summary(v)}" for k, v in kwargs.items()])
        event = Event("aiter", name, 0, args=text)

        def call():
            out = fn(*args, **kwargs)  # forwards
            event.result = _summary(out)
            return out

        return _record(event, call)  # forwards

    return wrapper


def _is_aiter_module(name: str) -> bool:
    return name.split(".")[0] in AITER_PREFIXES


# (module name, file) -> never holds aiter references (see NEVER_HOLD_AITER); the file is in the key
# because a submission may reuse a name the stdlib already loaded
_skipped_modules: dict[tuple, bool] = {}


def _never_holds_aiter(mod: types.ModuleType) -> bool:
    name, file = mod.__name__, getattr(mod, "__file__", None) or ""
    known = _skipped_modules.get((name, file))
    if known is None:
        top = name.split(".")[0]
        stdlib = top in getattr(sys, "stdlib_module_names", ()) and (not file or file.startswith(_STDLIB_DIRS))
        known = _skipped_modules[(name, file)] = top in NEVER_HOLD_AITER or stdlib
    return known


def _scanned_modules() -> list:
    return [m for m in list(sys.modules.values()) if isinstance(m, types.ModuleType) and not _never_holds_aiter(m)]


def _catch_up() -> None:
    """Wrap aiter callables of newly loaded modules and rebind them wherever a module holds them."""
    global _modules_seen
    if _import_depth or len(sys.modules) == _modules_seen:
        return
    _modules_seen = len(sys.modules)
    modules = _scanned_modules()
    for mod in modules:
        if not _is_aiter_module(mod.__name__):
            continue
        for attr, obj in list(vars(mod).items()):
            if (attr.startswith("_") or not AITER_NAMES.search(attr) or id(obj) in _wrapped or id(obj) in _originals
                    or not callable(obj) or isinstance(obj, (type, types.ModuleType, KernelInterface))):
                continue
            # Only aiter's own functions: a name aiter imported from elsewhere (the emulation imports our
            # oracle's quantize_mxfp4) is not an aiter call.
            if not _is_aiter_module(getattr(obj, "__module__", "") or ""):
                continue
            wrapper = _aiter_wrapper(obj, attr)
            _originals[id(obj)] = (obj, wrapper)
            _wrapped[id(wrapper)] = obj
    for mod in modules:
        namespace = vars(mod)
        for attr, obj in list(namespace.items()):
            hit = _originals.get(id(obj))
            if hit is not None and hit[0] is obj:
                namespace[attr] = hit[1]


def _unbind_all() -> None:
    for mod in _scanned_modules():
        namespace = vars(mod)
        for attr, obj in list(namespace.items()):
            if id(obj) in _wrapped and _originals.get(id(_wrapped[id(obj)]), (None, None))[1] is obj:
                namespace[attr] = _wrapped[id(obj)]


def _import_hook(original):
    @functools.wraps(original)
    def hooked(*args, **kwargs):
        global _import_depth
        _import_depth += 1
        try:
            module = original(*args, **kwargs)  # forwards
        finally:
            _import_depth -= 1
        if _active:
            _catch_up()
        return module

    return hooked


_HOOKS = [
    (JITFunction, "run", _launch_hook), (InterpretedFunction, "run", _launch_hook),
    (FunctionPath, "run", _path_hook), (FaultyPath, "run", _path_hook), (builtins, "__import__", _import_hook),
]


def _install() -> None:
    global _modules_seen
    for owner, attr, make in _HOOKS:
        original = getattr(owner, attr) if owner is builtins else vars(owner)[attr]
        _saved[(owner, attr)] = original
        setattr(owner, attr, make(original))
    _modules_seen = 0
    _catch_up()


def _uninstall() -> None:
    for (owner, attr), original in _saved.items():
        setattr(owner, attr, original)
    _saved.clear()
    _unbind_all()
    _originals.clear()
    _wrapped.clear()


def reset() -> None:
    """Put every hook and every rebound aiter name back (the process's state before the first trace)."""
    if _saved:
        _uninstall()


@contextlib.contextmanager
def trace_calls():
    """Record kernel paths, aiter calls and Triton launches made inside the block (nesting allowed).

    The hooks and the wrapped aiter names stay in place between blocks (each passes straight through while
    no trace is open): installing and removing them scanned every module's namespace twice per call, 25 ms a
    program on a GPU host (a third of a check's worker time in cProfile, stop 50). A block only catches up
    with the modules loaded since the last one."""
    trace = Trace(base_depth=_depth)
    if not _saved:
        _install()
    else:
        _catch_up()
    _active.append(trace)
    try:
        yield trace
    finally:
        _active.remove(trace)
