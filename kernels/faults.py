"""Fault injection for the kernel paths: wrap any Path so that it fails the way real paths fail, and
check that the dispatcher's fallback rules hold (next path used, failure remembered, no leaked output).

From a test::

    d = faulty_dispatcher("fused:raise@K%512!=0, helper:unavailable")
    y = d(data); d.last.fallbacks  # [("fused", "raised RuntimeError: injected fault ..."), ...]

From the command line (the variable is read by ``faulty_dispatcher()`` without an argument)::

    MXFP4_FUZZ_FAULTS="fused:partial(0.5)" python -m kernels.faults --shape 4 64 256

Spec grammar (whitespace is ignored; names are case-sensitive, M/N/K are not)::

    spec   := entry ("," entry)*
    entry  := target ":" kind ["(" arg ")"] ["@" when]
    target := a path name (fused, helper, asm, a4w4, ...) | "*" (every path)
    when   := cond ("&" cond)*              the fault fires only for shapes where all conds hold
    cond   := ("M" | "N" | "K") ["%" int] op int,   op := == != <= >= < >

    kind         arg (default)          what the wrapped path does
    unavailable  -                      requirements() -> (False, ...): the path is never run
    noaiter      -                      requirements() and run() see ``import aiter`` fail
    raise        exception (RuntimeError)  raises; also ValueError TypeError MemoryError AssertionError
                                        OSError OutOfMemoryError PathUnavailable
    partial      fraction (0.5)         computes y, copies that fraction of its rows into an output
                                        buffer from a pool shared by all faulty paths (the rest stays
                                        poison), then raises RuntimeError: the leak the dispatcher must
                                        not pass on
    garbage      nan|inf|zeros|random (nan)  returns y with its bottom-right <=4x32 tile overwritten
    slow         seconds (0.1)          sleeps, then runs; the time is in RunInfo.details["elapsed_s"]
    poison       -                      runs inside ``poison_allocations()``; the number of buffers
                                        poisoned is in RunInfo.details["poisoned_allocations"]

``when`` is only accepted by raise, partial, garbage and slow. Several entries for one path nest in
the order written: the first one listed sees the call first.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import torch

from kernels import platform
from kernels.dispatch import DEFAULT_PATHS, Dispatcher, NoPathError
from kernels.path import PathUnavailable, RunInfo

ENV_VAR = "MXFP4_FUZZ_FAULTS"
POISON_BYTE = 0xFF  # every byte of a poisoned buffer: NaN as bf16 (0xFFFF), fp32, fp16 and E8M0

EXCEPTIONS = {
    "RuntimeError": RuntimeError, "ValueError": ValueError, "TypeError": TypeError, "MemoryError": MemoryError,
    "AssertionError": AssertionError, "OSError": OSError, "OutOfMemoryError": torch.OutOfMemoryError,
    "PathUnavailable": PathUnavailable,
}
GARBAGE = ("nan", "inf", "zeros", "random")
KINDS = ("unavailable", "noaiter", "raise", "partial", "garbage", "slow", "poison")
_SHAPE_KINDS = ("raise", "partial", "garbage", "slow")
_DEFAULT_ARG = {"raise": "RuntimeError", "partial": 0.5, "garbage": "nan", "slow": 0.1}
_OPS = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
}
_ENTRY = re.compile(r"^(?P<target>[A-Za-z0-9_.*-]+):(?P<kind>[a-z]+)(?:\((?P<arg>[^()]*)\))?(?:@(?P<when>.*))?$")
_COND = re.compile(r"^(?P<var>[MNKmnk])(?:%(?P<mod>\d+))?(?P<op>==|!=|<=|>=|<|>)(?P<value>\d+)$")
_GRAMMAR = ("entry := target:kind[(arg)][@when], when := cond(&cond)*, cond := M|N|K[%int] op int; "
            f"kinds: {', '.join(KINDS)}")


class FaultSpecError(ValueError):
    """A fault spec that does not parse; the message names the entry, what is wrong and the grammar."""


@dataclass(frozen=True)
class Cond:
    var: str  # "M", "N" or "K"
    mod: int | None
    op: str
    value: int

    def holds(self, m: int, n: int, k: int) -> bool:
        x = {"M": m, "N": n, "K": k}[self.var]
        return _OPS[self.op](x % self.mod if self.mod else x, self.value)

    def __str__(self) -> str:
        return f"{self.var}{'%' + str(self.mod) if self.mod else ''}{self.op}{self.value}"


@dataclass(frozen=True)
class Fault:
    target: str
    kind: str
    arg: str | float | None = None
    when: tuple = ()  # Conds, all of which must hold; () = every shape

    def applies(self, shape: tuple) -> bool:
        return all(c.holds(*shape) for c in self.when)

    def __str__(self) -> str:
        text = f"{self.target}:{self.kind}"
        if self.arg is not None:
            text += f"({self.arg})"
        if self.when:
            text += "@" + "&".join(map(str, self.when))
        return text


def _fail(entry: str, why: str):
    raise FaultSpecError(f"bad fault spec entry {entry!r}: {why} ({_GRAMMAR})")


def _parse_arg(entry: str, kind: str, text: str | None):
    if kind not in _DEFAULT_ARG:
        if text is not None:
            _fail(entry, f"{kind!r} takes no argument")
        return None
    if text is None or text == "":
        return _DEFAULT_ARG[kind]
    if kind == "raise":
        if text not in EXCEPTIONS:
            _fail(entry, f"unknown exception {text!r}; one of {', '.join(EXCEPTIONS)}")
        return text
    if kind == "garbage":
        if text not in GARBAGE:
            _fail(entry, f"unknown garbage {text!r}; one of {', '.join(GARBAGE)}")
        return text
    try:
        value = float(text)
    except ValueError:
        _fail(entry, f"{kind} takes a number, got {text!r}")
    limits = {"partial": (0.0, 1.0), "slow": (0.0, 600.0)}[kind]
    if not (limits[0] <= value <= limits[1]):
        _fail(entry, f"{kind} argument must be in [{limits[0]}, {limits[1]}], got {value}")
    return value


def _parse_when(entry: str, text: str) -> tuple:
    conds = []
    for part in text.split("&"):
        match = _COND.match(part)
        if not match:
            _fail(entry, f"condition {part!r} is not M|N|K[%int] op int (op: {' '.join(_OPS)})")
        mod = int(match["mod"]) if match["mod"] is not None else None
        if mod == 0:
            _fail(entry, f"condition {part!r} takes a modulus of 0")
        conds.append(Cond(match["var"].upper(), mod, match["op"], int(match["value"])))
    return tuple(conds)


def parse_fault(entry: str) -> Fault:
    text = re.sub(r"\s+", "", entry)
    match = _ENTRY.match(text)
    if not match:
        _fail(entry, "not of the form target:kind[(arg)][@when]")
    kind = match["kind"]
    if kind not in KINDS:
        _fail(entry, f"unknown fault kind {kind!r}")
    when = ()
    if match["when"] is not None:
        if kind not in _SHAPE_KINDS:
            _fail(entry, f"{kind!r} does not depend on the shape; use raise(PathUnavailable)@... for a shape the path refuses")
        when = _parse_when(entry, match["when"])
    return Fault(match["target"], kind, _parse_arg(entry, kind, match["arg"]), when)


@dataclass(frozen=True)
class FaultPlan:
    faults: tuple = ()

    def __str__(self) -> str:
        return ",".join(map(str, self.faults))

    def wrap(self, paths, pool: OutputPool | None = None) -> list:
        """``paths`` with this plan's faults injected; a target that names no path is an error."""
        names = [p.name for p in paths]
        for f in self.faults:
            if f.target != "*" and f.target not in names:
                raise FaultSpecError(f"fault {str(f)!r} targets no path: the paths are {', '.join(names)}")
        pool = pool if pool is not None else OutputPool()
        wrapped = []
        for path in paths:
            for f in reversed([f for f in self.faults if f.target in ("*", path.name)]):
                path = inject(path, f, pool)
            wrapped.append(path)
        return wrapped


def parse(spec: str | None) -> FaultPlan:
    """A validated FaultPlan from spec text; None or blank is the empty plan."""
    if spec is None or not spec.strip():
        return FaultPlan()
    entries = spec.split(",")
    if any(not e.strip() for e in entries):
        raise FaultSpecError(f"empty entry in fault spec {spec!r} ({_GRAMMAR})")
    return FaultPlan(tuple(parse_fault(e) for e in entries))


def plan_from_env() -> FaultPlan:
    return parse(os.environ.get(ENV_VAR))


# --- poison -------------------------------------------------------------------------------------------

def poison_fill(t: torch.Tensor) -> torch.Tensor:
    """Set every byte of ``t``'s storage to POISON_BYTE."""
    if t.numel():
        t.untyped_storage().fill_(POISON_BYTE)
    return t


def poison_mask(t: torch.Tensor) -> torch.Tensor:
    """Elements of ``t`` whose every byte is POISON_BYTE (never written since they were poisoned)."""
    raw = t.detach().contiguous().view(torch.uint8).reshape(*t.shape, t.element_size())
    return (raw == POISON_BYTE).all(dim=-1)


class _PoisonedTorch:
    """Stands in for the ``torch`` module in a subject's namespace: empty-family allocations come back
    poisoned, everything else is torch itself."""

    def __init__(self, real):
        self._real = real
        self.allocations = 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _poisoned(self, t):
        self.allocations += 1
        return poison_fill(t)

    def empty(self, *args, **kwargs):
        return self._poisoned(self._real.empty(*args, **kwargs))

    def empty_like(self, *args, **kwargs):
        return self._poisoned(self._real.empty_like(*args, **kwargs))

    def empty_strided(self, *args, **kwargs):
        return self._poisoned(self._real.empty_strided(*args, **kwargs))


def _subject_modules() -> list:
    return [m for name, m in list(sys.modules.items())
            if m is not None and name.split(".")[0] in ("kernels", "aiter") and name != __name__]


@contextlib.contextmanager
def poison_allocations(modules=None):
    """Within the block, ``torch.empty``/``empty_like``/``empty_strided`` called from ``modules``
    (default: every loaded ``kernels.*`` and ``aiter.*`` module) return buffers filled with
    POISON_BYTE, so an output element or split-K workspace slot a path forgets to write is NaN with the
    tell-tale bits 0xFFFF (bf16) and shows in ``poison_mask``.

    Why rebinding the name ``torch`` in those modules rather than patching ``torch.empty``: a global
    patch would also poison the oracle, Hypothesis and torch's own Python code that calls torch.empty,
    and anything left patched after a failing test would corrupt every later test. Here only the
    subject's modules see the stand-in, and exit restores exactly the bindings it replaced. A
    dispatcher option could not reach allocations made inside a path. Not covered: names imported
    as ``from torch import empty``, ``Tensor.new_empty``, and allocations inside C++/HIP extensions.
    """
    real = sys.modules["torch"]
    proxy = _PoisonedTorch(real)
    replaced = []
    for mod in (_subject_modules() if modules is None else modules):
        if vars(mod).get("torch") is real:
            mod.torch = proxy
            replaced.append(mod)
    try:
        yield proxy
    finally:
        for mod in replaced:
            if vars(mod).get("torch") is proxy:
                mod.torch = real


@contextlib.contextmanager
def hidden_aiter():
    """Within the block ``import aiter`` (and every ``aiter.*``) raises ImportError, as on a machine
    without it; the modules already loaded are put back on exit."""
    saved = {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == "aiter"}
    for name in saved:
        sys.modules[name] = None
    sys.modules["aiter"] = None
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "aiter"]:
            if sys.modules[name] is None and name not in saved:
                del sys.modules[name]
        sys.modules.update(saved)


# --- the wrapper --------------------------------------------------------------------------------------

class OutputPool:
    """Output buffers reused across calls and across paths, keyed by (shape, dtype, device): the
    submission habit that turns one path's half-written output into another call's result. New buffers
    start poisoned."""

    def __init__(self):
        self.buffers: dict = {}

    def get(self, shape, dtype, device) -> torch.Tensor:
        key = (tuple(shape), dtype, str(device))
        if key not in self.buffers:
            self.buffers[key] = poison_fill(torch.empty(shape, dtype=dtype, device=device))
        return self.buffers[key]

    def aliases(self, t: torch.Tensor) -> bool:
        """Whether ``t`` shares memory with any pooled buffer."""
        lo = t.untyped_storage().data_ptr()
        hi = lo + t.untyped_storage().nbytes()
        for buf in self.buffers.values():
            b_lo = buf.untyped_storage().data_ptr()
            if b_lo < hi and lo < b_lo + buf.untyped_storage().nbytes():
                return True
        return False


@dataclass
class FaultEvent:
    shape: tuple
    fired: bool
    elapsed_s: float
    outcome: str  # "ok", "garbage", or the exception raised


@dataclass
class FaultyPath:
    """``inner`` with ``fault`` injected; same name, so records and the failure memo read as the real path."""

    inner: object
    fault: Fault
    pool: OutputPool = field(default_factory=OutputPool)
    runs: Counter = field(default_factory=Counter)  # shape -> run() calls
    log: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def requirements(self) -> tuple[bool, str]:
        if self.fault.kind == "unavailable":
            return False, f"injected fault {self.fault}"
        if self.fault.kind == "noaiter":
            with hidden_aiter():
                return self.inner.requirements()
        return self.inner.requirements()

    def run(self, data) -> tuple[torch.Tensor, RunInfo]:
        A, B_shuffle = data[0], data[3]
        shape = (A.shape[0], B_shuffle.shape[0], A.shape[1])
        self.runs[shape] += 1
        fired = self.fault.applies(shape)
        start = time.perf_counter()
        try:
            y, info = self._fire(data, shape) if fired else self.inner.run(data)
        except BaseException as exc:
            self.log.append(FaultEvent(shape, fired, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"))
            raise
        elapsed = time.perf_counter() - start
        self.log.append(FaultEvent(shape, fired, elapsed, "garbage" if fired and self.fault.kind == "garbage" else "ok"))
        details = dict(info.details, elapsed_s=elapsed)
        if fired:
            details["faults"] = details.get("faults", ()) + (str(self.fault),)
        return y, replace(info, details=details)

    def _fire(self, data, shape):
        f, kind = self.fault, self.fault.kind
        if kind == "unavailable":
            raise PathUnavailable(f"injected fault {f}: run() called on an unavailable path")
        if kind == "noaiter":
            with hidden_aiter():
                return self.inner.run(data)
        if kind == "poison":
            with poison_allocations() as poisoned:
                y, info = self.inner.run(data)
            return y, replace(info, details=dict(info.details, poisoned_allocations=poisoned.allocations))
        if kind == "raise":
            raise EXCEPTIONS[f.arg](f"injected fault {f} for shape {shape}")
        if kind == "slow":
            time.sleep(f.arg)
            return self.inner.run(data)
        y, info = self.inner.run(data)
        if kind == "partial":
            buf = self.pool.get(y.shape, y.dtype, y.device)
            rows = math.ceil(f.arg * y.shape[0])
            poison_fill(buf)
            buf[:rows].copy_(y[:rows])
            raise RuntimeError(f"injected fault {f}: wrote {rows} of {y.shape[0]} rows of a pooled output, then failed")
        _write_garbage(y, f.arg, shape)
        return y, info


def garbage_tile(m: int, n: int) -> tuple[slice, slice]:
    """Where the garbage fault writes: the bottom-right tile of at most 4 rows x 32 columns (tails are
    where kernels go wrong)."""
    return slice(m - min(m, 4), m), slice(n - min(n, 32), n)


def _write_garbage(y: torch.Tensor, what: str, shape: tuple) -> None:
    rows, cols = garbage_tile(*y.shape)
    tile = y[rows, cols]
    if what == "nan":
        tile.fill_(float("nan"))
    elif what == "inf":
        tile.fill_(float("inf"))
    elif what == "zeros":
        tile.zero_()
    else:
        g = torch.Generator().manual_seed(hash(shape) & 0xFFFFFFFF)
        tile.copy_(torch.randn(tile.shape, generator=g) * 64)


def inject(path, fault: Fault | str, pool: OutputPool | None = None) -> FaultyPath:
    """``path`` with one fault (a Fault or one spec entry) injected. Give faulty paths that should share
    leaked buffers the same ``pool``."""
    if isinstance(fault, str):
        fault = parse_fault(fault)
    return FaultyPath(path, fault, pool if pool is not None else OutputPool())


class FaultyDispatcher(Dispatcher):
    """A Dispatcher over faulty paths; ``plan`` and the shared ``pool`` stay inspectable."""

    def __init__(self, plan: FaultPlan, paths=DEFAULT_PATHS, history: int = 256):
        self.plan = plan
        self.pool = OutputPool()
        super().__init__(plan.wrap(list(paths), self.pool), history)

    def faulty(self, name: str) -> FaultyPath:
        """The outermost faulty wrapper of path ``name``."""
        for p in self.paths:
            if p.name == name and isinstance(p, FaultyPath):
                return p
        raise KeyError(f"no fault was injected into path {name!r}")


def faulty_dispatcher(spec: str | FaultPlan | None = None, paths=DEFAULT_PATHS) -> FaultyDispatcher:
    """A fresh Dispatcher over ``paths`` with ``spec``'s faults (default: $MXFP4_FUZZ_FAULTS)."""
    plan = spec if isinstance(spec, FaultPlan) else (plan_from_env() if spec is None else parse(spec))
    return FaultyDispatcher(plan, paths)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kernels.faults", description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", nargs="?", default=None, help=f"fault spec (default: ${ENV_VAR})")
    parser.add_argument("--shape", nargs=3, type=int, metavar=("M", "N", "K"), help="run the faulty dispatcher on this shape")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calls", type=int, default=2, help="calls on the same input (shows the failure memo)")
    args = parser.parse_args(argv)
    try:
        d = faulty_dispatcher(args.spec)
    except FaultSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"plan: {d.plan or '(no faults)'}")
    if not args.shape:
        return 0
    # The CLI only: kernels/ itself does not depend on the oracle.
    from reference import acceptable_range, accumulation_bound, exact_gemm_from_inputs, generate_input

    plat = platform.detect()
    data = generate_input(*args.shape, seed=args.seed, device=plat.device)
    exact = exact_gemm_from_inputs(data)
    # fp32 accumulation as the suite models it: IEEE round-to-nearest in the interpreter, any faithful
    # rounding with flushed denormals on a GPU (fuzz.judge.verdicts.accumulation_model, which kernels/ cannot import)
    accumulation = ({"unit_roundoff": 2.0**-24, "underflow": "gradual"} if plat.interpreter
                    else {"unit_roundoff": 2.0**-23, "underflow": "ftz"})
    status = 0
    for call in range(args.calls):
        try:
            y = d(data)
        except NoPathError as exc:
            print(f"call {call}: {exc}")
            status = 1
            continue
        rec = d.last
        lo, hi = acceptable_range(exact, accumulation_bound(exact, rec.info.splits, **accumulation), rec.info.rounding)
        y64 = y.double().to(lo.device)
        outside = int((~((lo <= y64) & (y64 <= hi))).sum())
        print(f"call {call}: served by {rec.info.path!r} ({rec.info.config}) "
              f"in {rec.info.details.get('elapsed_s', float('nan')):.3f}s; {outside} elements outside the oracle bound, "
              f"{int(poison_mask(y).sum())} poisoned; returned a leaked pool buffer: {d.pool.aliases(y)}")
        for name, reason in rec.fallbacks:
            print(f"  skipped {name}: {reason}")
        status = status or int(outside > 0)
    print(f"run() calls per path: {d.calls}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
