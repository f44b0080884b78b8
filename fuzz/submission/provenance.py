"""Who raised an exception in a submission's call: what the worker records of it, and what the verdicts
conclude from that record.

The worker describes every exception it catches (``describe_exception``): type, message, the file's
line, and the chain (the exception and those it was raised from or while handling), each with its frames
from the raise site outward as ``Frame`` records: whose code the frame is (``Origin``: the file's own, a
stand-in of ours in reference/, Triton's interpreter or frontend, a library) and what statement it is
(``Statement``: a raise, a wrapping re-raise, an assert, a stand-in forwarding the call). Frames cross the
pipe as JSON (``Frame.to_json``, read back by ``Frame.from_json``). The parent decides from them
(``tier_limit``): the file's own errors stay the file's (FAIL); what this tier cannot run (a tier-limit
type anywhere in the chain, or a stand-in failing by itself: ``raised_by``) is NOT RUN with its reason.
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import linecache
import os
import re
import traceback
from dataclasses import dataclass

DEVICE_FAULT_WORDS = (
    "illegal memory access", "device-side assert", "misaligned address", "unspecified launch failure",
    "hipErrorIllegalAddress", "HIP error", "CUDA error", "an illegal instruction",
)
MESSAGE_CHARS = 2000
CHAIN_LIMIT = 8  # exceptions of a chain recorded
FRAME_LIMIT = 24  # frames per exception, from the raise site outward (runs of library frames count once)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAND_IN_ROOT = os.path.join(REPO_ROOT, "reference") + os.sep  # the emulations and the oracle they use
MACHINERY_ROOT = os.path.join(REPO_ROOT, "fuzz") + os.sep  # the check's own code: hooks around the file's calls
NOT_MACHINERY = os.path.join(MACHINERY_ROOT, "examples") + os.sep  # example submissions, not machinery
FORWARD_MARKER = "# forwards"  # a stand-in line that only hands the call on to the real API
FORWARD_CALL = re.compile(r"(?:^return\s+|=\s*|^)(?:self\.)?_?(?:stock|original)\w*\(")  # ... or calls the original


class Origin(enum.Enum):
    """Whose code a frame is (its value is the frame's ``kind`` on the wire)."""

    OWN = "own"  # the submission or a module beside it
    STAND_IN = "stand_in"  # reference/: our emulations and the oracle code they call
    MACHINERY = "machinery"  # fuzz/: the check's hooks that wrap what the file calls (trace, counters, poison)
    INTERPRETER = "interpreter"  # Triton's interpreter
    FRONTEND = "frontend"  # triton.language: the semantics the compiler applies too
    LIBRARY = "library"  # everything else: torch, numpy, the standard library, aiter


class Statement(enum.Enum):
    """What the statement of a frame is."""

    RAISE = "raise"
    RAISE_FROM = "raise_from"  # wraps another exception
    ASSERT = "assert"
    FORWARD = "forward"  # a stand-in handing the call to the real API
    OTHER = "other"


@dataclass(frozen=True)
class Frame:
    """One frame of an exception's traceback; a run of library frames is one (its innermost, ``count``
    frames, ``entry`` the run's outermost: the API called)."""

    origin: Origin
    file: str
    line: int | None
    function: str
    code: str = ""
    statement: Statement = Statement.OTHER
    count: int = 1
    entry: str = ""

    def to_json(self) -> dict:
        record = {"kind": self.origin.value, "file": self.file, "line": self.line, "function": self.function,
                  "code": self.code, "statement": self.statement.value, "count": self.count}
        return {**record, "entry": self.entry} if self.entry else record

    @classmethod
    def from_json(cls, record: dict) -> Frame:
        return cls(Origin(record["kind"]), record.get("file", ""), record.get("line"), record.get("function", ""),
                   record.get("code", ""), Statement(record.get("statement", "other")), record.get("count", 1),
                   record.get("entry", ""))


# -- what the worker records -------------------------------------------------------------------------


def describe_exception(error: BaseException, path: str) -> dict:
    """Type, message, the innermost frame inside the submission file and the last three frames: enough
    to act on, without the traceback soup of torch/triton internals. ``chain`` is the provenance
    ``tier_limit`` judges: the exception and those it was raised from or while handling
    (``__cause__`` / ``__context__``, outermost first), each with its type's MRO and its frames from the
    raise site outward (``provenance_frames``)."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if os.path.abspath(f.filename) == path]
    if isinstance(error, SyntaxError) and error.filename and os.path.abspath(error.filename) == path:
        where = {"file": path, "line": error.lineno, "code": (error.text or "").strip()}
    elif own:
        where = {"file": path, "line": own[-1].lineno, "code": (own[-1].line or "").strip()}
    else:
        where = None
    tail = [f"{f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames[-3:]]
    message = str(error)
    return {
        "type": type(error).__name__,
        "message": message[:MESSAGE_CHARS] + (" ..." if len(message) > MESSAGE_CHARS else ""),
        "where": where,
        "frames": tail,
        "device_fault": any(word in message for word in DEVICE_FAULT_WORDS),
        "chain": exception_chain(error, path),
    }


def exception_chain(error: BaseException, path: str) -> list:
    """[{type, mro, message, frames}] for ``error`` and each exception it was raised from or while
    handling, outermost first (a suppressed context is left out, as Python's traceback does)."""
    chain, seen = [], set()
    while error is not None and id(error) not in seen and len(chain) < CHAIN_LIMIT:
        seen.add(id(error))
        chain.append({"type": type(error).__name__, "mro": [c.__name__ for c in type(error).__mro__[:-1]],
                      "message": str(error)[:300],
                      "frames": [f.to_json() for f in provenance_frames(error.__traceback__, path)]})
        error = error.__cause__ if error.__cause__ is not None else (
            None if error.__suppress_context__ else error.__context__)
    return chain


def frame_origin(filename: str, path: str) -> Origin:
    """Whose code ``filename`` is, for the submission at ``path`` (a module beside it is its own)."""
    full = os.path.abspath(filename)
    if full == path or os.path.dirname(full) == os.path.dirname(path):
        return Origin.OWN
    if full.startswith(STAND_IN_ROOT):
        return Origin.STAND_IN
    if full.startswith(MACHINERY_ROOT) and not full.startswith(NOT_MACHINERY):
        return Origin.MACHINERY
    normal = full.replace(os.sep, "/")
    if normal.endswith("/triton/runtime/interpreter.py"):
        return Origin.INTERPRETER
    if "/triton/language/" in normal:
        return Origin.FRONTEND
    return Origin.LIBRARY


@functools.lru_cache(maxsize=256)
def _statements(filename: str) -> tuple:
    """((first line, last line, Statement), ...) of the file's raise and assert statements."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            found.append((node.lineno, node.end_lineno,
                          Statement.RAISE_FROM if node.cause is not None else Statement.RAISE))
        elif isinstance(node, ast.Assert):
            found.append((node.lineno, node.end_lineno, Statement.ASSERT))
    return tuple(found)


def statement_kind(filename: str, line: int, code: str) -> Statement:
    """What the statement at ``line`` of ``filename`` (its text: ``code``) is."""
    if FORWARD_MARKER in code or FORWARD_CALL.search(code.strip()):
        return Statement.FORWARD
    for first, last, kind in _statements(filename):
        if first <= line <= (last or first):
            return kind
    return Statement.OTHER


def provenance_frames(tb, path: str) -> list[Frame]:
    """The frames of a traceback from the raise site outward, up to the submission's innermost frame; a
    run of library frames is one entry (its innermost)."""
    kept: list[Frame] = []
    for f in reversed(traceback.extract_tb(tb)):
        origin = frame_origin(f.filename, path)
        if origin is Origin.MACHINERY and statement_kind(f.filename, f.lineno, (f.line or "").strip()) \
                is Statement.FORWARD:
            continue  # a hook of the check's handing the call on: as if it were not there
        if origin is Origin.LIBRARY and kept and kept[-1].origin is Origin.LIBRARY:
            kept[-1] = dataclasses.replace(kept[-1], count=kept[-1].count + 1,
                                           entry=f"{f.name} ({f.filename})")  # the run's outermost: the API called
            continue
        code = (f.line or "").strip()
        library = origin is Origin.LIBRARY
        kept.append(Frame(origin, f.filename, f.lineno, f.name, code[:200],
                          Statement.OTHER if library else statement_kind(f.filename, f.lineno, code),
                          entry=f"{f.name} ({f.filename})" if library else ""))
        if origin is Origin.OWN or len(kept) >= FRAME_LIMIT:
            break
    return kept


# -- what the verdicts conclude ----------------------------------------------------------------------

# Errors that say the CPU tier cannot run something the runner can: never a FAIL, always NOT RUN.
TIER_LIMIT_TYPES = {
    "RocmUnavailable": "not runnable on this tier: needs hipcc / a ROCm GPU",
    "HipNotModelled": "not runnable on this tier: its HIP needs what the CPU model of gfx950 lacks",
    "HipModelRefused": "not runnable on this tier: its HIP needs what the CPU model of gfx950 lacks",
    "NotModelled": "not runnable on this tier: its HIP needs what the CPU model of gfx950 lacks",
    "HipNotModelledAtRunTime": "not runnable on this tier: its HIP, run on the CPU model of gfx950, needed what "
                               "the model does not run",
    "NotModelledOnCpu": "not runnable on this tier: uses a CUDA API the CPU tier does not model",
    "AiterNotEmulated": "not runnable on this tier: uses an aiter API the emulation does not have",
    "AiterAttributeNotEmulated": "not runnable on this tier: uses an aiter API the emulation does not have",
    "UnsupportedInlineAsm": "not runnable on this tier: uses inline asm the gfx950 instruction model does not have",
    "AmdInlineAsmOnNvidia": "not runnable on this tier: gfx950 inline asm does not compile for NVIDIA (the CPU tier "
                            "runs it with the gfx950 instruction model)",
}
# Triton's NVIDIA driver finding no libcuda: on a tier without a GPU only code generated for a real GPU gets
# there (the CPU tier interprets every Triton kernel a file launches), i.e. torch.compile's Inductor lowering
# the file's "cuda" tensors to GPU kernels
NO_DRIVER = "libcuda.so cannot found"
NO_DRIVER_REASON = ("not runnable on this tier: code generated for a real GPU (torch.compile's Inductor lowers "
                    "'cuda' tensors to GPU kernels), which the CPU tier does not run")
# The stand-ins (reference/, by path) and the ones whose raise/assert statements are deliberate: they
# raise there because the real thing raises there (aiter's checks, torch.cuda's, Triton's compiled
# frontend: FrontendRejects). Anything else a stand-in raises is the stand-in failing.
STAND_INS = (
    ("/reference/emulation/aiter_emu/", "the emulated aiter"),
    ("/reference/emulation/cuda_on_cpu.py", "cuda_on_cpu (the CUDA device stood in by the CPU)"),
    ("/reference/emulation/no_rocm.py", "no_rocm (HIP builds stood in)"),
    ("/reference/emulation/triton_interpreter.py", "the patched Triton interpreter"),
    ("/reference/emulation/gfx950_asm.py", "the gfx950 instruction model"),
    ("/reference/emulation/amd_inline_asm.py", "amd_inline_asm (gfx950 asm refused on NVIDIA)"),
    ("/reference/emulation/aiter_source.py", "aiter from source (its compiled layer stubbed)"),
    ("/reference/emulation/", "the CPU tier's emulation"),
    ("/reference/", "the oracle code the emulation calls"),
)
AITER_EMU = "/reference/emulation/aiter_emu/"
RAISES_AS_REAL = ("/reference/emulation/aiter_emu/", "/reference/emulation/cuda_on_cpu.py",
                  "/reference/emulation/triton_interpreter.py")
# Triton interpreter functions whose raise is the kernel's own (tl.device_assert, tl.assume) or a
# check compiled Triton makes too (the grid's rank, a tensor descriptor's alignment).
INTERPRETER_OWN = frozenset({"create_assert", "create_assume"})
INTERPRETER_CHECKS = frozenset({"__call__", "validate"})
# Stand-in functions whose raise is what the runner raises too (no_rocm: a build or import of the file's that
# fails the same way under ROCm's torch).
AS_ON_THE_RUNNER = frozenset({"_fails_as_on_the_runner"})


@dataclass(frozen=True)
class Raiser:
    """Who raised one exception of a chain: the code (``stand_in`` empty: the file's own code, Triton's
    frontend semantics, or a stand-in raising as the real API raises), or the stand-in of ours named
    ``stand_in`` failing by itself, at ``frame``, with the library frame it called there (``below``) or
    None (it raised itself)."""

    stand_in: str = ""
    frame: Frame | None = None
    below: Frame | None = None


THE_CODE = Raiser()


def stand_in_name(path: str) -> str:
    normal = path.replace("\\", "/")
    return next((name for part, name in STAND_INS if part in normal), "a stand-in")


def _short_path(path: str) -> str:
    normal = path.replace("\\", "/")
    for anchor in ("/reference/", "/triton/", "/torch/", "/numpy/", "/site-packages/"):
        if anchor in normal:
            return normal[normal.index(anchor) + 1:]
    return normal.rsplit("/", 1)[-1]


def raised_by(exc: dict) -> Raiser | None:
    """Who raised one exception of a chain, from its frames (raise site first, ``provenance_frames``):
    ``THE_CODE``, a ``Raiser`` naming the stand-in that failed, or None (only library frames: undecided).
    Forwarding lines and wrapping re-raises (``raise X from e``) of stand-ins are passed through: the
    cause decides."""
    below = None
    for f in map(Frame.from_json, exc.get("frames") or []):
        if f.origin is Origin.LIBRARY:
            below = below or f
            continue
        if f.origin is Origin.MACHINERY:
            continue  # the check's hooks hand the call on; where they raise themselves, raised_in_machinery decides
        if below is None and f.function in AS_ON_THE_RUNNER and "/reference/emulation/" in f.file.replace("\\", "/"):
            return THE_CODE  # its raise (a forwarding "raise error") is the runner's failure too
        if f.statement is Statement.RAISE_FROM and f.origin is not Origin.OWN and below is None:
            return None  # a wrapping re-raise (the interpreter's InterpreterError): its cause, next in the chain, decides
        if f.statement in (Statement.FORWARD, Statement.RAISE_FROM) and f.origin is not Origin.OWN:
            continue
        if f.origin in (Origin.OWN, Origin.FRONTEND):
            return THE_CODE
        if f.origin is Origin.INTERPRETER:
            if below is None and (f.function in INTERPRETER_OWN
                                  or (f.statement is Statement.ASSERT and f.function in INTERPRETER_CHECKS)):
                return THE_CODE
            return Raiser("the Triton interpreter", f, below)
        if (below is not None and "CompilationError" in (exc.get("mro") or [])
                and AITER_EMU in f.file.replace("\\", "/")):
            # compiled Triton (the GPU tier) rejecting an emulated aiter kernel the emulation launched: the
            # kernels follow aiter's at the runner's commit, rejections included (a static assert where aiter's
            # source fails to compile, a zero-sized reshape): the CPU tier's FrontendRejects of the same kernel
            return THE_CODE
        deliberate = any(part in f.file.replace("\\", "/") for part in RAISES_AS_REAL)
        if below is None and deliberate and f.statement in (Statement.RAISE, Statement.ASSERT) \
                and "NotImplementedError" not in (exc.get("mro") or [exc.get("type")]):
            return THE_CODE
        return Raiser(stand_in_name(f.file), f, below)
    return None


# A line of faulthandler's dump: '  File "PATH", line N in FUNCTION'
FAULT_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')
# Our machinery that runs anyone's kernel (the file's or a stand-in's): a crash there says nothing of whose
FAULT_MACHINERY = ("/reference/emulation/triton_interpreter.py", "/reference/emulation/triton_batched.py",
                   "/reference/emulation/patch_registry.py", "/reference/emulation/module_exec.py")


def crash_in_stand_in(stderr: str, path: str) -> str | None:
    """For a worker a signal killed: the stand-in of ours the crashing thread was running, as "the emulated
    aiter (aiter/ops/...py:148 in _gemm_..._kernel)", when its innermost frame that is the file's or a
    stand-in's (faulthandler's "Current thread" stack; libraries, Triton's interpreter and our machinery that
    runs any kernel skipped) is a stand-in's; None when it is the file's code or the dump says nothing.

    A stand-in's kernel reads memory through raw pointers on the CPU, as the GPU does; one that reads past
    what the file passed can fault here where the GPU reads whatever lies there, so the crash is ours to
    tell apart, never the file's verdict."""
    lines = stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Current thread")), None)
    if start is None:
        return None
    for line in lines[start + 1:]:
        match = FAULT_FRAME.match(line)
        if match is None:
            break  # the end of the crashing thread's stack
        file = match["file"]
        normal = file.replace("\\", "/")
        origin = frame_origin(file, path)
        if origin is Origin.OWN:
            return None
        if origin is Origin.STAND_IN and not any(part in normal for part in FAULT_MACHINERY):
            return f"{stand_in_name(file)} ({_short_path(file)}:{match['line']} in {match['function']})"
    return None


def _called_api(error: dict) -> str:
    """What the file called when the exception came (the frame just inside its own), if known."""
    chain = error.get("chain") or []
    frames = [f for f in map(Frame.from_json, chain[0].get("frames", []) if chain else [])
              if f.origin is not Origin.MACHINERY]  # the check's hooks around the API are not the API
    for inner, outer in zip(frames, frames[1:]):
        if outer.origin is Origin.OWN:
            if inner.origin is Origin.LIBRARY:
                function, _, path = (inner.entry or inner.function).partition(" (")
                return f"{function} ({_short_path(path.rstrip(')'))})" if path else function
            return f"{inner.function} of {stand_in_name(inner.file)}"
    return ""


def _named_limit(exc: dict) -> str | None:
    """The tier-limit type an exception carries under another name: a wrapper re-raised with the
    original's traceback (Dynamo's ``InternalTorchDynamoError``: the raise site is ``raise
    NotModelledOnCpu(...)``) or its message (``"NotModelledOnCpu: ..."``)."""
    frames = exc.get("frames") or []
    site = Frame.from_json(frames[0]) if frames else None
    named = re.match(r"raise\s+(\w+)\b", site.code) if site is not None and site.origin is Origin.STAND_IN else None
    if named and named.group(1) in TIER_LIMIT_TYPES:
        return named.group(1)
    prefix = re.match(r"(\w+): ", exc.get("message", ""))
    return prefix.group(1) if prefix and prefix.group(1) in TIER_LIMIT_TYPES else None


def _runner_only_module(message: str) -> str | None:
    """The reason for ``No module named 'X'`` when the runner's image has X (reference/emulation/
    runner_image.py: its Dockerfile's packages), or None: a module the runner lacks fails there too. A
    dotted name (``'X.y'``) means this machine has X and lacks only a submodule: the file's, as before."""
    from reference.emulation.runner_image import runner_has

    missing = re.match(r"No module named '([^'.]+)'", message)
    package = runner_has(missing.group(1)) if missing else None
    return (f"not runnable on this tier: the runner has {package} ({missing.group(1)}), this machine does not"
            if package else None)


def _unemulated_aiter_name(message: str) -> str | None:
    """The reason for ``cannot import name 'N' from 'aiter.M' (<the emulation's file>)`` when real aiter's
    module M has N at the runner's commit (the emulation's surface list), or None: a name aiter never had
    fails on the runner too."""
    found = re.match(r"cannot import name '([^']+)' from '(aiter(?:\.[\w.]+)?)' \(([^)]*)\)", message)
    if not found or "/reference/emulation/aiter_emu/" not in found.group(3).replace("\\", "/"):
        return None
    surface = _aiter_surface()
    if not surface.real_name(found.group(2), found.group(1)):
        return None
    return (f"not runnable on this tier: uses {found.group(2)}.{found.group(1)} (in aiter {surface.COMMIT}), "
            "which the emulation does not have (docs/aiter_emulation.md lists what it has)")


@functools.lru_cache(maxsize=1)
def _aiter_surface():
    """The emulation's list of real aiter names (aiter_emu/aiter/_not_emulated.py), loaded from its file
    alone: importing the emulated ``aiter`` package here would bring its kernels into the judge's process."""
    import importlib.util

    from reference.emulation.aiter_surface import EMULATION

    path = EMULATION / "aiter" / "_not_emulated.py"
    spec = importlib.util.spec_from_file_location("mxfp4_fuzz_aiter_surface", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _our_kernel_rejected(message: str) -> str | None:
    """Where compiled Triton's frontend rejects a kernel of ours (a stand-in's, e.g. the emulated aiter's,
    named by the path the message opens with), the rejection is our bug to fix, not the file's: None for
    a kernel of the file's."""
    path = message.split(": kernel ", 1)[0].rsplit(":", 1)[0].replace("\\", "/")
    # The emulated aiter's kernels follow aiter's at the runner's commit, rejections included: aiter's own
    # _gemm_a16wfp4_preshuffle_kernel at f3be04a12a0c is rejected by the gfx950 frontend at M=1 N=64 K=64 as
    # ours is (BLOCK_SIZE_K // 32 // 8 == 0; run with --aiter source=PATH on that checkout, 2026-12-03), so
    # there the file's call fails on the runner too. Run aiter's own kernel with --aiter source=PATH to tell.
    if "/reference/" not in path or "/reference/emulation/aiter_emu/" in path:
        return None
    kernel = message.split(": kernel ", 1)[1].split(":", 1)[0] if ": kernel " in message else "a kernel"
    return (f"not runnable on this tier: {stand_in_name(path)}'s own Triton kernel {kernel} is rejected by "
            f"Triton's compiled frontend (ours to fix, not the file's)")


def _limit_of(exc: dict) -> str | None:
    """The reason one exception of a chain is a tier limit (its type, or a stand-in failing), or None."""
    names = exc.get("mro") or [exc.get("type")]
    reason = next((TIER_LIMIT_TYPES[n] for n in [*names, _named_limit(exc)] if n in TIER_LIMIT_TYPES), None)
    if reason is None and "FileNotFoundError" in names and "no ROCm" in exc.get("message", ""):
        reason = TIER_LIMIT_TYPES["RocmUnavailable"]
    if reason is None and "ModuleNotFoundError" in names:
        reason = _runner_only_module(exc.get("message", ""))
    if reason is None and "FrontendRejects" in names:
        reason = _our_kernel_rejected(exc.get("message", ""))
    if reason is None and "ImportError" in names:
        reason = _unemulated_aiter_name(exc.get("message", ""))
    if reason is None and NO_DRIVER in exc.get("message", ""):
        reason = NO_DRIVER_REASON
    by = raised_by(exc) if reason is None else None
    if by is not None and by.stand_in and "NotImplementedError" in names:
        reason = f"not runnable on this tier: {by.stand_in} does not implement it"
    elif by is not None and by.stand_in:
        frame, below = by.frame, by.below
        through = f" in {below.entry or below.function}" if below else ""
        reason = (f"not runnable on this tier: {by.stand_in} failed, not the file's code: raised{through} from "
                  f"{_short_path(frame.file)}:{frame.line} in {frame.function} ({frame.code})")
    return reason


def tier_limit(error: dict | None) -> str | None:
    """The reason the CPU tier cannot run what raised ``error`` (a worker error dict), or None.

    An exception is the tier's when any exception of its chain (``__cause__``/``__context__``, as the
    worker records it) is a tier-limit type (TIER_LIMIT_TYPES, by MRO: no ROCm, a CUDA API or an aiter
    name not modelled, inline asm not modelled), or was raised by a stand-in (``raised_by``): inside the
    emulation, the Triton interpreter's internals or the oracle code the emulation calls, other than by
    a deliberate raise/assert of a stand-in that raises where the real API raises. A NotImplementedError
    of a stand-in is a tier limit too. The file's own code, Triton's frontend rejections and errors from
    the libraries it calls stay the file's (FAIL). Error dicts without a chain (older records, load
    errors) are judged by their type alone."""
    if not error:
        return None
    chain = error.get("chain") or [{"type": error.get("type"), "message": error.get("message", "")}]
    for depth, exc in enumerate(chain):
        reason = _limit_of(exc)
        if reason is None:
            continue
        api = _called_api(error)
        notes = [f"inside {api}"] if api else []
        renamed = [] if _named_limit(exc) in (None, exc.get("type")) else [_named_limit(exc)]
        if depth or renamed:
            notes.append("raised as " + " <- ".join([e.get("type", "?") for e in chain[:depth + 1]] + renamed))
        note = f"; {', '.join(notes)}" if notes else ""
        return f"{reason} ({exc.get('type')}: {exc.get('message', '')}{where_note(error)}{note})"
    return None


def raised_in_machinery(error: dict | None) -> Frame | None:
    """The frame of the check's own code (fuzz/: the hooks it wraps around what the file calls, e.g. the call
    trace, the launch counters, the poisoning allocators, the compile lock) that raised an exception inside the
    file's call or import, or None. Such an exception is a bug of ours, never the file's FAIL: the worker
    answers it as an internal error (ERROR, exit code 9), as it does for a bug outside the file's call.

    A frame decides when it is the innermost of the exception's frames that is not a library's and its line
    does more than hand the call on (``# forwards`` lines, ``return original(...)``): the file's own code, a
    stand-in or Triton further in decides instead. Only exceptions with the file's frame further out count
    (raised inside its call); a device fault is never ours by its site (it surfaces at whatever synchronises
    next, a poisoning allocator's fill included)."""
    if not error or error.get("device_fault"):
        return None
    for exc in error.get("chain") or []:
        frames = [Frame.from_json(f) for f in exc.get("frames") or []]
        if not any(f.origin is Origin.OWN for f in frames):
            continue
        for f in frames:
            if f.origin is Origin.LIBRARY or (f.origin is Origin.MACHINERY and f.statement is Statement.FORWARD):
                continue
            if f.origin is Origin.MACHINERY:
                return f
            break
    return None


def aiter_note(error: dict | None) -> str:
    """`` [inside aiter's own ...]``: where an error the file gets (not a tier limit) was raised or faulted
    inside the emulated aiter, whose code follows aiter's at the runner's commit there; so the card says
    the runner's aiter does the same given the file's arguments. "" otherwise."""
    if not error or tier_limit(error):
        return ""
    for exc in error.get("chain") or []:
        frames = [Frame.from_json(f) for f in exc.get("frames") or []]
        inside = next((f for f in frames if AITER_EMU in f.file.replace("\\", "/")), None)
        if inside is not None:
            return (f" [inside aiter's own {inside.function} ({_short_path(inside.file)}:{inside.line}), which the "
                    f"emulation follows at the runner's aiter commit: aiter does this too on the runner, given the "
                    f"arguments the file passed]")
    return ""


def where_note(error: dict) -> str:
    """`` (line L: code)``: the submission's line an error record names, or ""."""
    where = error.get("where")
    return f" (line {where['line']}: {where['code']})" if where else ""
