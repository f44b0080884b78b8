"""HIP built at runtime, on a machine without ROCm: fail fast as such a machine does, and remember it.

Real submissions compile HIP C++ on the runner: ``torch.utils.cpp_extension.load_inline(cuda_sources=...)``
/ ``load(sources=[*.hip, *.cu])``, or ``subprocess.run(["hipcc", ...])`` and ``ctypes``. On the CPU tier
there is no hipcc and no GPU to run the result on, so the build must fail the way it fails on any
machine without ROCm, quickly (a CPU ``load_inline`` spends about a minute on torch's headers before it
fails), so that the file's own fallback is what gets fuzzed.

``install()`` (the submission worker calls it wherever there is no ROCm; ``install(cuda_builds=True)`` on a
CUDA GPU, the nvidia tier, where nvcc builds CUDA-clean sources: there only what needs ROCm is refused,
a source using ROCm's headers or HIP-only names included, and the GPU builds nvcc makes are recorded too):

- ``load_inline`` / ``load`` with GPU sources (``cuda_sources``, ``.cu``/``.hip``/``.cuh`` files, or
  ``extra_cuda_cflags``) raise ``RocmUnavailable`` (an ``OSError``, as torch's "CUDA_HOME not set" is)
  at once, and so do C++-only extensions built against ROCm (a ``#include`` of ROCm's headers, e.g.
  ``hip/hip_runtime.h``, ``hipblaslt/hipblaslt.h``, ``hip/hiprtc.h``; ``-l`` of a ROCm library or a
  ROCm root in ``extra_ldflags``/``extra_include_paths``); other C++-only extensions build as usual;
- ``subprocess`` calls whose program is a HIP compiler (``hipcc``, ``amdclang++``, ``hipconfig``, or a
  clang given ``--offload-arch``/``-x hip``) raise ``FileNotFoundError`` as a missing executable does,
  even where a clang exists here (it could build for gfx950, but nothing here could run it);
- ``ctypes`` loads of ROCm's libraries (``ctypes.CDLL``/``cdll.LoadLibrary``/``cdll.<name>`` of
  ``libamdhip64``, ``libhiprtc``, ``librocblas``, ``libhipblaslt``, ... or anything under a ROCm root)
  raise ``RocmUnavailable`` with the loader's own words ("cannot open shared object file"), an
  ``OSError`` as the missing library's is, so a file's ``except OSError`` fallback runs; a real load
  never happens here, even where Debian's ``libamdhip64`` is installed (nothing here can run HIP).
  ``ctypes.util.find_library`` of a ROCm library answers the name the runner's loader finds
  (``libamdhip64.so``), so the file goes on to load it and meets the same ``RocmUnavailable``;
- every attempt is recorded (``attempts()``: API, where in the file, the sources and the build options)
  so the report can say the file's HIP path did not run here and which path served instead, and so that
  ``fuzz.submission.hip_builds`` can build the same sources for gfx950 (``Attempt.to_json()``).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from reference.emulation import include_folders, runner_paths

GPU_SOURCE_SUFFIXES = (".cu", ".cuh", ".hip")
RECORDED_OPTIONS = ("extra_cflags", "extra_cuda_cflags", "extra_include_paths", "extra_ldflags", "no_implicit_headers")
HIP_COMPILERS = ("hipcc", "amdclang", "amdclang++", "hipconfig", "hipcc.pl", "hipcc.bin")
# ROCm's shared libraries (ROCm 7.1's lib/): the HIP runtime, HIPRTC, the math and communication
# libraries, the HSA runtime and code-object manager, SMI and tracing.
ROCM_LIBRARIES = re.compile(
    r"^lib(amdhip64|hiprtc|hiprtc-builtins|hsa-runtime64|amd_comgr|rocblas|hipblas|hipblaslt|hipblas-common|"
    r"rocsolver|hipsolver|rocsparse|hipsparse|hipsparselt|rocfft|hipfft|rocrand|hiprand|MIOpen|rccl|"
    r"rocm_smi64|amd_smi|roctx64|roctracer64|rocprofiler(-sdk)?|rocprofiler64|hipdnn|composable_kernel)"
    r"(\.so[.0-9]*|-[0-9.]+\.so[.0-9]*)?$")
ROCM_ROOTS = ("/opt/rocm",)
# Names only HIP declares: gfx950 builtins, HIP's launch macro, its runtime API and types. A source using
# them needs ROCm even where a CUDA compiler exists (nvcc does not know them).
HIP_ONLY_NAMES = re.compile(r"\b__builtin_amdgcn_\w+|\bhipLaunchKernelGGL\b|\b__hip_\w+|\bhip[A-Z]\w*\s*\(")
ROCM_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]((?:hip/|hipblaslt/|hipblas|rocblas|hiprtc|rocrand/|hiprand/|'
                          r'rocprim/|hipcub/|rocwmma/|ck/|ck_tile/|miopen/|rccl/|hipfft/|rocfft/|hipsparse|rocsparse|'
                          r'hipsolver|rocsolver|hsa/|amd_comgr/|rocm_smi/|roctracer/|rocprofiler)[^>"]*)[>"]',
                          re.MULTILINE)


class RocmUnavailable(OSError):
    """The CPU tier has no ROCm: a HIP/CUDA extension cannot be built or run here."""


class HipNotModelled(FileNotFoundError):
    """A hipcc build the CPU model of gfx950 (reference/emulation/hip_cpu) cannot run: it uses something
    the model lacks, or the host compiler refused it. Raised where a missing hipcc raises, so the file's
    own fallback runs; the verdicts that need the file's HIP are NOT RUN, naming what."""


@dataclass
class Attempt:
    api: str  # "load_inline", "load", "subprocess", "hiprtc" (a program compiled), "ctypes" (a ROCm library loaded)
    where: str  # "file:line" of the call in the submission (first frame outside torch/subprocess)
    name: str = ""
    sources: dict = field(default_factory=dict)  # file name -> text (what a gfx950 build check compiles)
    command: list = field(default_factory=list)
    options: dict = field(default_factory=dict)  # the build options of RECORDED_OPTIONS given; "paths": name -> path
    cpu_model: str = ""  # "built": the CPU model of gfx950 (hip_cpu) built it and the file runs it; else why not
    # Why what the runner builds or runs here did not run (refused for want of ROCm, or the CPU model could not
    # build or run it): "" when it did. A file that catches the exception and falls back is then judged on
    # its fallback, which the report must say (issue 39).
    not_run: str = ""
    # Seconds the CPU model's build took (compiler, torch's extension build): a one-time cost, paid on the
    # first call that builds; the official check's projection to the runner's shapes leaves it out.
    seconds: float = 0.0

    def describe(self) -> str:
        what = self.name or " ".join(self.command[:3])
        return f"{self.api}({what}) at {self.where}: no ROCm on this machine, the call raised as it would here"

    def to_json(self) -> dict:
        return asdict(self)


_state = {"installed": False, "undo": [], "attempts": [], "cuda_builds": False, "tier": "CPU tier",
          "hip_cpu_libraries": {}}  # path -> its ctypes handle (dlopen shares the file's own loaded copy)


_BLOCK_CALLBACK = ctypes.CFUNCTYPE(None)


def on_hip_cpu_block(callback) -> None:
    """``callback()`` after every block a library built by the CPU model runs (the worker counts it as
    progress); applies to libraries built from now on."""
    _state["block_callback"] = None if callback is None else _BLOCK_CALLBACK(callback)  # kept alive here
    _state["block_tick"] = callback


# The host of prebuilt code objects a library's hipModuleLoad asks (include/hip_cpu_module.h): op 0 load, 1 get
# function, 2 launch; answers 0, HIP's error code, or NOT_MODELLED after recording why (code_objects.py).
_CODE_OBJECT_HOST = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                                     ctypes.c_ulong, ctypes.POINTER(ctypes.c_uint))
NOT_MODELLED = 1000  # hip_cpu_runtime.h's kNotModelled


def _code_object_modelled(path: str) -> None:
    """Record that the code object at ``path`` (one the model runs) was loaded: the report's hip line."""
    from reference.emulation.hip_cpu import code_objects

    kernel = code_objects.kernel_of(path)
    _state["attempts"].append(Attempt("hipModuleLoad", _caller(), name=os.path.basename(path), cpu_model=(
        f"modelled: aiter's f4gemm ASM kernel {kernel.name} runs as the emulated aiter's model of it "
        "(reference/emulation/hip_cpu/code_objects.py); the runner runs aiter's binary")))


def _code_object_host(op, path, name, args, size, dims) -> int:
    from reference.emulation.hip_cpu import code_objects

    path, name = (path or b"").decode(errors="replace"), (name or b"").decode(errors="replace")
    try:
        if op == 0:
            _code_object_modelled(path)
        elif op == 1:
            return 0 if code_objects.has_function(path, name) else 500  # hipErrorNotFound, as HIP's
        else:
            code_objects.launch(path, name, ctypes.string_at(args, size), (dims[0], dims[1], dims[2]),
                                (dims[3], dims[4], dims[5]))
        return 0
    except code_objects.NotModelled as error:
        reason = str(error)
    except Exception as error:  # noqa: BLE001 -- the model itself failed (ours): never an exception through C
        reason = f"the CPU model's run of aiter's f4gemm code object failed: {type(error).__name__}: {error}"
    if reason not in _state["code_object_refusals"]:
        _state["code_object_refusals"].append(reason)
    if op == 0:  # the file may catch the failed load and fall back: the report must say what did not run
        _state["attempts"].append(Attempt("hipModuleLoad", _caller(), name=path, cpu_model=reason, not_run=reason))
    return NOT_MODELLED


_state["code_object_host"] = _CODE_OBJECT_HOST(_code_object_host)  # kept alive as long as the libraries
_state["code_object_refusals"] = []


def hip_cpu_launches() -> int:
    """Kernel launches so far of every library the CPU model built (each counts its own)."""
    from reference.emulation.hip_cpu import code_objects

    total = code_objects.LAUNCHES[0]  # aiter's code objects launched through ctypes
    for library in _state["hip_cpu_libraries"].values():
        if library is not None:
            total += int(library.hip_cpu_launch_count())
    return total


def hip_cpu_take_unmodelled() -> str:
    """What the file's HIP needed at run time that the CPU model does not run (divergent lane operations, a
    barrier not every thread reaches), since the last time this was asked; "" when nothing."""
    reasons = list(_state["code_object_refusals"])
    _state["code_object_refusals"].clear()
    for library in _state["hip_cpu_libraries"].values():
        if library is not None and hasattr(library, "hip_cpu_take_unmodelled"):
            library.hip_cpu_take_unmodelled.restype = ctypes.c_char_p
            reason = library.hip_cpu_take_unmodelled().decode(errors="replace")
            if reason and reason not in reasons:
                reasons.append(reason)
    return "; ".join(reasons)


def _shared_build(argv: list, cwd: str) -> dict | None:
    """A ``hipcc ... -shared -o lib.so src.hip`` command's parts (sources, output, defines, includes), or None
    for anything else (a code object for hipModuleLoad, an object file, --version): those stay refused."""
    if "-shared" not in argv or "-o" not in argv or "--genco" in argv or "-c" in argv:
        return None
    i = argv.index("-o")
    if i + 1 >= len(argv):
        return None
    where = lambda a: os.path.abspath(os.path.join(cwd or "", a))  # noqa: E731
    sources = [where(a) for a in argv if a.endswith(GPU_SOURCE_SUFFIXES + (".cpp", ".cc"))]
    defines, includes, j = [], [], 1
    while j < len(argv):
        a = argv[j]
        if a in ("-D", "-I") and j + 1 < len(argv):
            (defines if a == "-D" else includes).append(argv[j + 1] if a == "-D" else where(argv[j + 1]))
            j += 2
            continue
        if a.startswith("-D") and len(a) > 2:
            defines.append(a[2:])
        elif a.startswith("-I") and len(a) > 2:
            includes.append(where(a[2:]))
        j += 1
    return {"sources": sources, "output": where(argv[i + 1]), "defines": defines, "includes": includes} if sources else None


def _build_on_cpu_model(parts: dict, texts: list) -> str:
    """Builds the command (``texts``: its sources' contents) with the CPU model; "built", or raises HipNotModelled
    saying why not."""
    from reference.emulation.hip_cpu import build

    try:
        build.compile_shared(texts, parts["output"], parts["defines"], parts["includes"])
    except build.NotModelled as error:
        raise HipNotModelled(2, f"not runnable on the CPU tier: {error}", parts["sources"][0]) from None
    except build.BuildError as error:
        raise HipNotModelled(2, f"the CPU model's host compiler refused it: {error}", parts["sources"][0]) from None
    _register_library(parts["output"])
    return "built"


# Libraries the CPU model built at a file's own path (``hipcc -shared -o /tmp/lib_<hash>.so``) outlive the check:
# a file that loads such a path when it exists (a build cache of its own, common in real files) would skip its
# build in every later check on this machine and ``builds_gfx950`` would have nothing to compile, where the
# runner, which starts without the library, builds it. Each such output is recorded here (its command and
# sources), and a later process's first load of it runs the build again, as the runner would.


def _output_record(output: str):
    from reference.emulation.hip_cpu import build

    digest = hashlib.sha256(os.path.abspath(output).encode()).hexdigest()[:16]
    return build.CACHE / "outputs" / f"{digest}.json"


def _file_digest(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""


def _build_scope() -> str:
    """This process (a pid reused later is told apart by its start): each worker of a check builds the library
    again once, so the first program of every worker records the build, as a worker that built it itself does."""
    if _state.get("scope_pid") != os.getpid():
        _state.update(scope_pid=os.getpid(), scope=f"{os.getpid()}-{time.time_ns()}")
    return _state["scope"]


def _remember_output(parts: dict, texts: list, attempt: "Attempt") -> None:
    """Record the model's build of ``parts`` from ``texts`` at the file's own output path (see
    _replay_earlier_build)."""
    entry = {"output": parts["output"], "sha256": _file_digest(parts["output"]), "scope": _build_scope(),
             "sources": texts, "defines": parts["defines"],
             "includes": parts["includes"], "attempt": attempt.to_json()}
    _write_record(_output_record(parts["output"]), entry)


def _write_record(record, entry: dict) -> None:
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        staged = record.with_name(f".{record.name}.{os.getpid()}")
        staged.write_text(json.dumps(entry))
        os.replace(staged, record)
    except OSError:
        pass  # without the record a later check loads the library as the file finds it (its build not seen)


def _replay_earlier_build(name) -> None:
    """``name`` is a library the CPU model built for an earlier check at the file's own path, unchanged since:
    build it again now (the model's cache makes that cheap) and record the build as this check's, as the
    runner builds it. Once per process (_build_scope); a library built or changed by anything else since is loaded
    as it is. A path that is no such library costs a hash of its name and a failed open."""
    try:
        path = os.path.abspath(os.fsdecode(name))
    except TypeError:
        return
    record = _output_record(path)
    try:
        entry = json.loads(record.read_text())
    except (OSError, ValueError):
        return
    if entry.get("scope") == _build_scope() or entry.get("sha256") != _file_digest(path):
        return
    entry["scope"] = _build_scope()  # first: the build below loads the library through this hook again
    _write_record(record, entry)
    attempt = Attempt(**{**entry["attempt"], "where": _caller(), "cpu_model": "", "not_run": "", "seconds": 0.0})
    _state["attempts"].append(attempt)
    start = time.perf_counter()
    from reference.emulation.hip_cpu import build

    try:
        build.compile_shared(entry["sources"], path, entry["defines"], entry["includes"])
        attempt.cpu_model = ("built (again: the library at this path was left by an earlier check on this machine; "
                             "the runner starts without it and builds it)")
        _register_library(path)
    except (build.NotModelled, build.BuildError) as error:  # the file loads what the earlier build left
        attempt.cpu_model = attempt.not_run = (f"not built again ({error}): the file loads the library an earlier "
                                               "check on this machine left at this path")
    finally:
        attempt.seconds = time.perf_counter() - start
    entry["sha256"] = _file_digest(path)
    _write_record(record, entry)


def installed() -> bool:
    return _state["installed"]


def attempts() -> list:
    return list(_state["attempts"])


def reset_attempts() -> None:
    _state["attempts"].clear()


def _caller() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not any(part in path for part in ("/torch/", "/subprocess.py", "/ctypes/", os.path.dirname(__file__))):
            return f"{path}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _as_list(value) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _options(kwargs: dict) -> dict:
    return {k: (kwargs[k] if isinstance(kwargs[k], bool) else [str(v) for v in _as_list(kwargs[k])])
            for k in RECORDED_OPTIONS if kwargs.get(k) is not None}


def _is_hip_command(args) -> bool:
    argv = [args] if isinstance(args, str) else list(args or [])
    if not argv:
        return False
    words = argv[0].split() if isinstance(args, str) else [str(argv[0])]
    program = os.path.basename(words[0]) if words else ""
    text = " ".join(map(str, argv))
    if program in HIP_COMPILERS or program.startswith("hipcc"):
        return True
    return program.startswith(("clang", "clang++")) and ("--offload-arch" in text or "-x hip" in text)


def rocm_library(name) -> str | None:
    """The ROCm library ``name`` (a ``CDLL`` argument: a bare name or a path) loads, or None."""
    if name is None or not isinstance(name, (str, bytes, os.PathLike)):
        return None
    text = os.fsdecode(name)
    roots = _rocm_roots()
    base = os.path.basename(text)
    under_root = os.path.isabs(text) and text.startswith(tuple(r.rstrip("/") + "/" for r in roots))
    if ROCM_LIBRARIES.match(base) or under_root:
        return base
    return None


def _rocm_roots() -> tuple:
    return ROCM_ROOTS + tuple(r for r in (os.environ.get("ROCM_PATH"), os.environ.get("ROCM_HOME")) if r)


def rocm_uses(texts, kwargs: dict) -> list:
    """What of ROCm an extension build needs (its includes, HIP-only names, libraries, ROCm directories), or []."""
    texts = list(texts)
    found = [m.group(1) for t in texts for m in ROCM_INCLUDE.finditer(t)]
    found += [m.group(0).rstrip("( ") for t in texts for m in HIP_ONLY_NAMES.finditer(t)]
    for flag in _as_list(kwargs.get("extra_ldflags")):
        flag = str(flag)
        if flag.startswith("-l") and rocm_library(f"lib{flag[2:]}.so"):
            found.append(flag)
        elif flag.startswith(("-L", "-Wl,-rpath")) and any(r in flag for r in _rocm_roots()):
            found.append(flag)
        elif os.path.isabs(flag) and rocm_library(flag):
            found.append(flag)
    found += [str(d) for d in _as_list(kwargs.get("extra_include_paths")) if str(d).startswith(_rocm_roots())]
    return list(dict.fromkeys(found))


def _refuse_library(name, api: str) -> None:
    library = rocm_library(name)
    if library is None:
        return
    text = os.fsdecode(name)
    message = (f"{text}: cannot open shared object file: No such file or directory (no ROCm on this "
               f"machine: {_state['tier']}; {library} is ROCm's, the runner loads it)")
    _state["attempts"].append(Attempt("ctypes", _caller(), name=library, command=[api, text], not_run=message))
    raise RocmUnavailable(message)


def _refused_build(gpu: bool, texts, kwargs: dict) -> str | None:
    """What a build needs that this machine lacks, or None to build it: GPU sources where no CUDA compiler
    builds (the CPU tier), anything that needs ROCm (``rocm_uses``) everywhere."""
    uses = rocm_uses(texts, kwargs) if not gpu or _state["cuda_builds"] else []
    if gpu and (not _state["cuda_builds"] or uses):
        return "HIP/CUDA sources" + (f" needing ROCm ({', '.join(uses[:4])})" if uses else "")
    return f"a C++ extension against ROCm ({', '.join(uses[:4])})" if uses else None


# load_inline options that mean the same to a CPU build of the translated sources; the rest (hipcc's
# extra_cuda_cflags, with_cuda) are the GPU compiler's and are left out.
# Not "verbose": with it torch prints the compiler's output instead of raising with it, and a refusal of the
# model's host compiler would reach the report without its error lines (CaptnJackSparrow 18f7b1b)
CPU_BUILD_OPTIONS = ("functions", "extra_cflags", "extra_include_paths", "build_directory",
                     "with_pytorch_error_handling", "is_python_module", "is_standalone", "keep_intermediates")


class HipModelRefused(RocmUnavailable):
    """A load_inline / load of HIP sources the CPU model of gfx950 cannot build: it uses something the
    model lacks (named), or the host compiler refused the translation. An OSError, as a failed GPU build
    is here: the file's own fallback runs; the verdicts that need its HIP are NOT RUN."""


def _built_alone(name: str, options: dict, build):
    """``build()`` of torch's extension ``name`` holding an flock on its build directory. Torch guards a
    build with a plain ``lock`` file, which a worker killed mid-build (a hang, the time budget) leaves
    behind, and every later build of the same extension then waits on it forever: a hang read as the
    file's. The OS drops the flock with its holder, so whoever holds it knows a ``lock`` file there is
    stale and removes it first (every build under mxfp4-fuzz's extension folder comes through here)."""
    import fcntl

    from torch.utils import cpp_extension

    directory = options.get("build_directory") or cpp_extension._get_build_directory(name, verbose=False)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, ".mxfp4-fuzz-build.lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when this process ends, however it ends
        stale = os.path.join(directory, "lock")
        if os.path.exists(stale):
            os.remove(stale)
        return build()


def _ticking(work):
    """``work()`` while a thread counts a progress tick a second (a CPU build of torch's headers takes
    about half a minute, which the worker would otherwise take for a hang)."""
    import threading

    tick = _state.get("block_tick")
    stop = threading.Event()

    def ticker():
        while not stop.wait(1.0):
            tick()

    thread = threading.Thread(target=ticker, daemon=True) if tick else None
    if thread:
        thread.start()
    try:
        return work()
    finally:
        stop.set()


class FileImportFailed(ImportError):
    """The CPU model built the file's extension and importing it failed as it fails on the runner."""


class FileBuildFailed(RuntimeError):
    """The file's extension fails to build for a reason of torch's build, not of the GPU: the same on the
    runner (its own PYBIND11_MODULE beside ``functions=``, whose generated module defines PyInit again)."""


def _fails_as_on_the_runner(error: Exception):
    """Raise ``error``, which the runner's torch raises too: the file's failure, not the stand-in's
    (fuzz/submission/provenance.py reads a raise in this function as the code's)."""
    raise error from None  # the stand-in's own exception is not part of what the runner raises


def _on_cpu_model(attempt: Attempt, build_it):
    """``build_it()``: the file's extension built for the CPU model, with ``attempt`` saying how that went; the
    model's refusal re-raised (NOT RUN), a failure torch gives on the runner too raised as the runner's."""
    start = time.perf_counter()
    try:
        module = build_it()
    except HipModelRefused as error:
        attempt.cpu_model = attempt.not_run = str(error)
        raise
    except FileImportFailed as error:
        attempt.cpu_model = f"built; importing it failed as on the runner: {error}"
        _fails_as_on_the_runner(ImportError(str(error)))
    except FileBuildFailed as error:
        attempt.cpu_model = f"its build fails as on the runner: {error}"
        _fails_as_on_the_runner(RuntimeError(str(error)))
    finally:
        attempt.seconds = time.perf_counter() - start
    attempt.cpu_model = "built"
    return module


class _RefusalMemo:
    """A translated source the model's host compiler refused, remembered on disk (``hip_cpu.build.CACHE``) so
    the same build is refused at once the next time: every example executes the file afresh, and a refused
    load_inline cost each program two host compiles (with and without the precompiled header: 37 s on the
    2-core box for vyomakesh0728's v52, whose source includes a header the runner has and this machine lacks),
    so the budget ran out before one example could run. Keyed by everything the compile sees: the sources,
    flags, include folders (the files each holds now: include_folders.fingerprint), the compiler and the
    model's headers. Successes are torch's own cache's."""

    def __init__(self, name, sources, cflags, options, clang):
        import hashlib

        from reference.emulation.hip_cpu import build

        folders = include_folders.named(cflags) + [str(p) for p in _as_list(options.get("extra_include_paths"))]
        seen = include_folders.fingerprint(folders)
        self.folders_digest = seen[:12]
        # the model's headers are in the key through cflags (-DHIP_CPU_MODEL_DIGEST)
        key = repr((name, sources, cflags, sorted((k, repr(v)) for k, v in options.items()), seen, clang))
        self.path = build.CACHE / "refused" / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".txt")

    def recall(self) -> str | None:
        try:
            return self.path.read_text() + " (remembered: this build was refused before, unchanged since)"
        except OSError:
            return None

    def remember(self, message: str) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(message)
            os.replace(partial, self.path)  # whole or absent for a reader
        except OSError:
            pass  # not remembered: the next build is tried again


def defines_init_twice(name: str, message: str) -> bool:
    """The model's build of extension ``name`` failed because its source defines PYBIND11_MODULE beside the one
    load_inline(functions=...) generates (torch names a rebuild of the same extension with other sources
    ``<name>_v1``, ``_v2``, ...: thinngo's hip_16x16 was read as the model's refusal under that name)."""
    return re.search(rf"redefinition of 'PyInit_{re.escape(name)}_hipcpu(_v\d+)?'", message) is not None


def _load_inline_on_cpu_model(stock_inline, name, cpp_sources, cuda, kwargs: dict):
    """The extension built for the CPU model: every GPU source translated (hip_cpu.build.translate_torch),
    compiled with clang++ by torch's own CPU extension build, as ``<name>_hipcpu``. Raises HipModelRefused."""
    from reference.emulation.hip_cpu import build

    missing = build.unmodelled("\n".join(cuda + _as_list(cpp_sources)))
    if missing:
        raise HipModelRefused(f"load_inline({name!r}): the CPU model of gfx950 does not have {', '.join(missing[:6])}")
    clang = build.find_clang()
    if clang is None:
        raise HipModelRefused(f"load_inline({name!r}): no clang++ here to build HIP for the CPU model")
    options = {k: kwargs[k] for k in CPU_BUILD_OPTIONS if k in kwargs}
    # the GPU sources' include folders (extra_cuda_cflags' -I) are where their headers are on the runner too
    cuda_includes = [f for f in _as_list(kwargs.get("extra_cuda_cflags")) if isinstance(f, str) and f.startswith("-I")]
    # the runner's own folders (-I/home/runner/aiter/csrc/include) read from their stand-in here, if any
    # and each include folder whose headers hold inline asm staged translated (build.model_include_flags)
    cuda_includes = build.model_include_flags(runner_paths.mapped_flags(cuda_includes))
    if options.get("extra_include_paths"):
        options["extra_include_paths"] = [build.staged_include_folder(p) for p in runner_paths.mapped_flags(
            [str(p) for p in _as_list(options["extra_include_paths"])])]
    if options.get("extra_cflags"):
        options["extra_cflags"] = build.model_include_flags(runner_paths.mapped_flags(_as_list(options["extra_cflags"])))
    cflags = _as_list(options.get("extra_cflags")) + cuda_includes + [
        *build.MODEL_FLAGS, f"-DHIP_CPU_MODEL_DIGEST={build.model_digest()}"]
    options["extra_include_paths"] = _as_list(options.get("extra_include_paths")) + [str(build.INCLUDE)]
    sources = _as_list(cpp_sources) + [build.translate_torch(c) for c in cuda]
    refusal = _RefusalMemo(name, sources, cflags, options, clang)
    # torch rebuilds only when its key (sources and flags) changes, and it counts a failed build as done: the
    # state of the include folders, a define, makes a folder that appeared since a build of another key
    cflags = cflags + [f"-DHIP_CPU_INCLUDES_SEEN={refusal.folders_digest}"]
    remembered = refusal.recall()
    if remembered:
        raise HipModelRefused(remembered)
    previous = os.environ.get("CXX")
    os.environ["CXX"] = clang  # torch's CPU build compiles with $CXX

    def built(with_header):
        # The precompiled header, where one fits, is a flag like any other: torch's cache key sees it. A build
        # that fails with it (it does not fit, or the source needs torch's headers after its own definitions)
        # is built again without it, so the header never decides a verdict
        header_flags = ["-include-pch", str(with_header)] if with_header else []
        ready = {**options, "extra_cflags": cflags + header_flags + ["-include", str(build.HEADER)]}
        # a copy of the sources each time: torch appends its bindings to the list it is given
        return _ticking(lambda: _built_alone(f"{name}_hipcpu", ready,
                                             lambda: stock_inline(f"{name}_hipcpu", list(sources), **ready)))

    try:
        header = _ticking(lambda: build.torch_pch(clang))
        try:
            module = built(header)
        except ImportError:
            raise  # built and linked: the header had no part in it
        except Exception as error:  # noqa: BLE001 -- the same build without the header decides
            if header is None or "file not found" in str(error):  # a missing header is missing either way
                raise
            module = built(None)
    except ImportError as error:
        if f"{name}_hipcpu" in str(error) and "cannot open shared object file" in str(error):
            # torch skipped a build it had tried in this process (it records the attempt, not its success) and
            # found no library: the model's earlier refusal again, never the file's import failure
            raise HipModelRefused(f"load_inline({name!r}): the CPU model's build of it failed earlier in this "
                                  "process and left no library") from None
        if "undefined symbol" in str(error):  # the model's library lacks a function the runner's toolchain and
            # runtime provide (a compiler-runtime helper, a HIP API the model has not): ours, never the file's
            symbol = str(error).rsplit("undefined symbol:", 1)[-1].strip()
            raise HipModelRefused(f"load_inline({name!r}): the CPU model's library does not load: it lacks "
                                  f"{symbol}, which the runner's ROCm provides") from None
        # built and linked, but no Python module in it (no PYBIND11_MODULE, no functions=): torch's import fails
        # the same way on the runner, so this is the file's failure, not the model's
        raise FileImportFailed(str(error).replace(f"{name}_hipcpu", name)) from None
    except Exception as error:  # the compiler's refusal, as torch reports it
        if kwargs.get("functions") and defines_init_twice(name, str(error)):
            raise FileBuildFailed(f"Error building extension '{name}': redefinition of 'PyInit_{name}': the source "
                                  "defines PYBIND11_MODULE and load_inline(functions=...) generates another "
                                  "(torch does the same on the runner)") from None
        lines = [line for line in str(error).splitlines() if "error" in line][:3]
        message = (f"load_inline({name!r}): the CPU model's host compiler refused it: "
                   + ("; ".join(lines) or str(error)[-300:]))
        absent = [why for folder in include_folders.named(cflags) if (why := runner_paths.absent_reason(folder))]
        if absent and "file not found" in message:  # the runner's own folder: say what it holds and how to have it
            message += f" ({absent[0]})"
        refusal.remember(message)
        raise HipModelRefused(message) from None
    finally:
        if previous is None:
            os.environ.pop("CXX", None)
        else:
            os.environ["CXX"] = previous
    library = getattr(module, "__file__", None)
    if library:
        _register_library(library)
    return module


def _register_library(path: str) -> None:
    library = _state["hip_cpu_libraries"].get(path)
    if library is None:  # once per path: a fresh module of the file loads the same library again
        try:
            library = ctypes.CDLL(path)  # the handle the file's own load shares
            library.hip_cpu_launch_count.restype = ctypes.c_longlong
            library.hip_cpu_set_progress.argtypes = [_BLOCK_CALLBACK]
            if hasattr(library, "hip_cpu_set_code_object_host"):
                library.hip_cpu_set_code_object_host.argtypes = [_CODE_OBJECT_HOST]
                library.hip_cpu_set_code_object_host(_state["code_object_host"])
        except (OSError, AttributeError):
            library = None
        _state["hip_cpu_libraries"][path] = library
    if library is not None and _state.get("block_callback") is not None:
        library.hip_cpu_set_progress(_state["block_callback"])


# The ROCm libraries whose ctypes use the CPU model stands in for (reference/emulation/hip_cpu/hiprtc.py):
# HIPRTC to compile, the HIP runtime's module API to load and launch.
HIPRTC_MODELLED = ("libhiprtc", "libamdhip64")


def _hiprtc_runtime():
    if "hiprtc_runtime" not in _state:
        from reference.emulation.hip_cpu import hiprtc

        folder = _process_folder("mxfp4-fuzz-hiprtc")
        _state["hiprtc_runtime"] = hiprtc.Runtime(folder, on_built=_register_library, on_refused=_hiprtc_refused,
                                                  on_compiled=_hiprtc_compiled, on_code_object=_code_object_modelled)
    return _state["hiprtc_runtime"]


def _process_folder(parent: str) -> str:
    """A folder for this process's files under ``$TMPDIR/<parent>``, removed at its exit; the folders of
    processes that are gone without their exit handlers (a program's forked child ends with os._exit, a
    killed worker) are removed by the next process that makes one. A folder of a live process (its pid)
    is never touched: a library in it may be loaded there."""
    import atexit
    import shutil
    import tempfile

    base = os.path.join(tempfile.gettempdir(), parent)
    os.makedirs(base, exist_ok=True)
    for name in os.listdir(base):
        pid = name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    folder = tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _alive(pid: int) -> bool:
    # thread_budget._alive is the same test; reference/ imports nothing from fuzz/, so it is not shared
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _hiprtc_refused(what: str, why: str) -> None:
    """The HIPRTC model could not build or run ``what`` (a compile its host compiler refused, a function it
    does not model): recorded as an attempt that did not run, whatever the file does with the failure."""
    _state["attempts"].append(Attempt("ctypes", _caller(), name=what, command=["HIPRTC", what],
                                      cpu_model=why, not_run=why))


def _hiprtc_compiled(name: str, source: str, defines: list, includes: list, why: str) -> None:
    """Every program the file compiles with HIPRTC, as the runner's HIPRTC would get it: the gfx950 build
    check builds the same source with the same defines; ``why`` says why the CPU model did not build it."""
    _state["attempts"].append(Attempt("hiprtc", _caller(), name=name, sources={name: source},
                                      command=["HIPRTC", name], options={"defines": defines, "includes": includes},
                                      cpu_model=why or "built", not_run=why))


def install(cuda_builds: bool = False) -> bool:
    """Idempotent; True once active. ``cuda_builds``: a CUDA GPU machine (the nvidia tier), where nvcc
    builds CUDA-clean sources; only what needs ROCm is refused there."""
    if _state["installed"]:
        return True
    from torch.utils import cpp_extension

    _state.update(cuda_builds=cuda_builds, tier="NVIDIA tier" if cuda_builds else "CPU tier")
    # The CPU tier runs hipcc-built libraries on the CPU model of gfx950; the NVIDIA tier cannot (its
    # tensors live on the GPU, which host code cannot read).
    _state["cpu_model"] = not cuda_builds
    undo = _state["undo"]
    stock_inline, stock_load = cpp_extension.load_inline, cpp_extension.load

    def load_inline(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        cuda = _as_list(cuda_sources) + _as_list(kwargs.get("sycl_sources"))
        gpu = bool(cuda or kwargs.get("extra_cuda_cflags") or kwargs.get("with_cuda"))
        what = _refused_build(gpu, _as_list(cpp_sources) + cuda, kwargs)
        attempt = None
        if gpu or what:  # a GPU build nvcc makes here is recorded too: builds_gfx950 builds it as the runner would
            sources = {f"{name}.cpp": "\n".join(_as_list(cpp_sources)), **({f"{name}.cu": "\n".join(cuda)} if gpu else {})}
            attempt = Attempt("load_inline", _caller(), name, sources, options=_options(kwargs))
            _state["attempts"].append(attempt)
        if what and gpu and cuda and _state.get("cpu_model"):  # the CPU tier runs it on the model of gfx950
            return _on_cpu_model(attempt, lambda: _load_inline_on_cpu_model(stock_inline, name, cpp_sources, cuda,
                                                                            kwargs))
        if what:
            message = (f"load_inline({name!r}) builds {what}: no ROCm on this machine ({_state['tier']}); "
                       f"on the runner {'hipcc builds it' if gpu else 'it builds'}")
            if attempt is not None:
                attempt.not_run = message
            raise RocmUnavailable(message)
        return _built_alone(name, kwargs, lambda: stock_inline(name, cpp_sources, cuda_sources, *args, **kwargs))

    def load(name, sources, *args, **kwargs):
        files = _as_list(sources)
        gpu = any(str(s).endswith(GPU_SOURCE_SUFFIXES) for s in files) or bool(kwargs.get("extra_cuda_cflags"))
        read = {str(s): _read(str(s)) for s in files}
        what = _refused_build(gpu, read.values(), kwargs)
        if gpu or what:
            paths = {os.path.basename(str(s)): os.path.abspath(str(s)) for s in files}
            texts = {os.path.basename(str(s)): read[str(s)] for s in files}
            _state["attempts"].append(Attempt("load", _caller(), name, texts, options={**_options(kwargs), "paths": paths}))
        if what and gpu and _state.get("cpu_model"):  # the CPU tier runs it on the model of gfx950
            gpu_texts = [read[str(f)] for f in files if str(f).endswith(GPU_SOURCE_SUFFIXES)]
            cpp_texts = [read[str(f)] for f in files if not str(f).endswith(GPU_SOURCE_SUFFIXES)]
            return _on_cpu_model(_state["attempts"][-1], lambda: _load_inline_on_cpu_model(
                stock_inline, name, cpp_texts, gpu_texts, kwargs))
        if what:
            message = f"load({name!r}) builds {what}: no ROCm on this machine ({_state['tier']})"
            if gpu or what:
                _state["attempts"][-1].not_run = message
            raise RocmUnavailable(message)
        return _built_alone(name, kwargs, lambda: stock_load(name, sources, *args, **kwargs))  # forwards

    undo += [(cpp_extension, "load_inline", stock_inline), (cpp_extension, "load", stock_load)]
    cpp_extension.load_inline, cpp_extension.load = load_inline, load

    stock_init = subprocess.Popen.__init__

    def popen_init(self, args, *rest, **kwargs):
        if _is_hip_command(args):
            argv = args.split() if isinstance(args, str) else [str(a) for a in args]
            files = [a for a in argv if a.endswith(GPU_SOURCE_SUFFIXES + (".cpp",))]
            paths = {os.path.basename(a): os.path.abspath(os.path.join(kwargs.get("cwd") or "", a)) for a in files}
            sources = {n: _read(p) for n, p in paths.items()}
            attempt = Attempt("subprocess", _caller(), command=argv, sources=sources, options={"paths": paths})
            _state["attempts"].append(attempt)
            parts = _shared_build(argv, kwargs.get("cwd")) if _state.get("cpu_model") else None
            if parts is None:
                attempt.not_run = f"{os.path.basename(argv[0])}: no ROCm on this machine ({_state['tier']})"
                raise FileNotFoundError(2, f"No such file or directory (no ROCm on this machine: {_state['tier']})",
                                        os.path.basename(argv[0]))
            start = time.perf_counter()
            texts = [_read(p) for p in parts["sources"]]  # read once: the build and its record hold the same text
            try:
                attempt.cpu_model = _build_on_cpu_model(parts, texts)
            except HipNotModelled as error:
                attempt.cpu_model = attempt.not_run = error.strerror
                raise
            finally:
                attempt.seconds = time.perf_counter() - start
            _remember_output(parts, texts, attempt)
            # built: the command "succeeds" (a no-op process), and the file loads the library it asked for
            noop = [sys.executable, "-c", ""]
            args = subprocess.list2cmdline(noop) if kwargs.get("shell") else noop
        stock_init(self, args, *rest, **kwargs)  # forwards

    undo.append((subprocess.Popen, "__init__", stock_init))
    subprocess.Popen.__init__ = popen_init

    stock_cdll_init, stock_find = ctypes.CDLL.__init__, ctypes.util.find_library

    def cdll_init(self, name, *args, **kwargs):  # CDLL, PyDLL, cdll.LoadLibrary, cdll.<name>
        if _state.get("cpu_model"):
            _replay_earlier_build(name)
        library = rocm_library(name)
        if library and _state.get("cpu_model") and library.startswith(HIPRTC_MODELLED):
            from reference.emulation.hip_cpu import hiprtc

            stock_cdll_init(self, None)  # this process's own symbols; the modelled functions go on top
            hiprtc.install_on(self, _hiprtc_runtime(), library)
            _state["attempts"].append(Attempt("ctypes", _caller(), name=library, command=["ctypes.CDLL", os.fsdecode(name)],
                                              cpu_model="modelled: HIPRTC and HIP modules on the CPU model"))
            return
        _refuse_library(name, "ctypes.CDLL")
        stock_cdll_init(self, name, *args, **kwargs)  # forwards

    def find_library(name):
        if isinstance(name, str) and rocm_library(f"lib{name}.so"):
            return f"lib{name}.so"  # what the runner's loader finds; loading it raises RocmUnavailable here
        return stock_find(name)  # forwards

    undo += [(ctypes.CDLL, "__init__", stock_cdll_init), (ctypes.util, "find_library", stock_find)]
    ctypes.CDLL.__init__, ctypes.util.find_library = cdll_init, find_library
    _state["installed"] = True
    return True


def uninstall() -> None:
    for obj, name, value in reversed(_state["undo"]):
        setattr(obj, name, value)
    _state["undo"].clear()
    _state["installed"] = False
