"""HIPRTC and HIP's module API through ctypes, on the CPU model of gfx950.

A file that loads ``libhiprtc.so`` / ``libamdhip64.so`` with ctypes, compiles a kernel source with
``hiprtcCompileProgram`` and launches it with ``hipModuleLaunchKernel`` gets these functions instead of
ROCm's: the program is built by ``build.compile_shared`` with one generated launcher per ``extern "C"
__global__`` kernel, which unpacks ``kernelParams`` (an array of argument addresses, as HIP's) by the
kernel's own parameter types. The "code object" handed back is a token naming that library.

Modelled: hiprtcCreateProgram, hiprtcCompileProgram, hiprtcGetCodeSize, hiprtcGetCode, hiprtcGetProgramLogSize,
hiprtcGetProgramLog, hiprtcDestroyProgram, hiprtcGetErrorString, hipModuleLoadData, hipModuleLoad (a file path:
aiter's f4gemm ASM code objects only, run as the emulated aiter's model, code_objects.py), hipModuleGetFunction,
hipModuleLaunchKernel (kernelParams for the model's own builds; the ``extra`` buffer for aiter's),
hipModuleUnload, hipGetErrorString, and the synchronisation and error calls that have nothing to do on the CPU.
Each is a ``ModelledFunction``: ``restype``, ``argtypes`` and ``errcheck`` act as on a ctypes function.
Any other function of these libraries raises ``NotModelled`` naming it (NOT RUN, never FAIL).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reference.emulation.hip_cpu import build, code_objects

KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+(?:(?:__launch_bounds__\s*\([^)]*\)|'
                    r'__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\))\s*)*void\s+(\w+)\s*\(([^)]*)\)', re.DOTALL)
INCLUDE_LINE = re.compile(r"^[ \t]*#[ \t]*include\b[^\n]*$", re.MULTILINE)
SUCCESS, ERROR = 0, 1
TOKEN = b"hip_cpu_module:"


def parameter_types(params: str) -> list:
    """The types of a kernel's parameters: each declaration without its name."""
    types = []
    for decl in build._split_top(params):
        decl = re.sub(r"\b__restrict__\b|\b__restrict\b", "", decl).strip()
        if not decl or decl == "void":
            continue
        name = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl)
        types.append(decl[:name.start()].strip() if name else decl)
    return types


def compile_options(count, options) -> tuple:
    """(defines, include dirs) of hiprtcCompileProgram's options: ``-DNAME[=V]`` / ``-D NAME``, ``-I DIR``; the
    rest (``--offload-arch``, ``-O3``, ``-std=``...) mean nothing to the model's host build."""
    texts = iter([_text(options[i]).strip() for i in range(int(count or 0))] if options else [])
    defines, includes = [], []
    for option in texts:
        for flag, into in (("-D", defines), ("-I", includes)):
            if option.startswith(flag):
                value = option[len(flag):] or next(texts, "").strip()  # "-D NAME": the value is the next option
                if value:
                    into.append(value)
    return defines, includes


def kernel_declarations(source: str, defines=()) -> list:
    """[(name, parameters)] of the extern "C" kernels the source defines with these defines: its own
    preprocessor conditions applied (a kernel's attributes may sit in #if branches), its #includes left out
    (the headers' macros would rewrite __global__ itself). The raw text where the preprocessor fails."""
    clang = build.find_clang()
    if clang and "#" in source:
        source = _preprocessed(clang, INCLUDE_LINE.sub("", source), tuple(defines))
    return KERNEL.findall(source)


def _preprocessed(clang: str, source: str, defines: tuple) -> str:
    """``clang -E`` of the source, cached on disk beside the model's libraries: a file that compiles its
    program in every fresh module (each forked program) would otherwise run the preprocessor each time."""
    key = hashlib.sha256("\0".join([clang, source, *defines]).encode()).hexdigest()[:16]
    cached = build.CACHE / f"{key}.declarations.cpp"
    try:
        return cached.read_text()
    except OSError:
        pass
    done = subprocess.run([clang, "-E", "-P", "-x", "c++", *[f"-D{d}" for d in defines], "-"],
                          input=source, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return source  # the raw text: the kernels' pattern still finds what the preprocessor did not hide
    try:
        build.CACHE.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f".{key}.{os.getpid()}.part")
        partial.write_text(done.stdout)
        os.replace(partial, cached)  # a reader sees the whole text or none
    except OSError:
        pass
    return done.stdout


def launchers(source: str, defines=()) -> str:
    """C++ of one ``hipcpu_module_launch_<kernel>(grid, block, shared, params)`` per extern "C" kernel."""
    out = []
    for name, params in kernel_declarations(source, defines):
        types = parameter_types(params)
        args = ", ".join(f"*({t}*)params[{i}]" for i, t in enumerate(types))
        out.append(f'extern "C" void hipcpu_module_launch_{name}(unsigned gx, unsigned gy, unsigned gz, unsigned bx, '
                   f"unsigned by, unsigned bz, unsigned shared, void** params) {{ "
                   f"hipLaunchKernelGGL({name}, dim3(gx, gy, gz), dim3(bx, by, bz), shared, 0{', ' + args if args else ''}); }}")
    return "\n".join(out)


class NotModelled(build.NotModelled):
    pass


@dataclass(frozen=True)
class CodeObject:
    """A module or function handle of a prebuilt code object the model runs (code_objects.py)."""
    path: str
    name: str = ""


def _address(value) -> int:
    """The address a ctypes argument holds or is: an array, a pointer, a c_void_p, byref(), or an int."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, ctypes.c_void_p):
        return value.value or 0
    if hasattr(value, "_obj"):  # byref(x)
        return ctypes.addressof(value._obj)
    if isinstance(value, ctypes.Array):
        return ctypes.addressof(value)
    return ctypes.cast(value, ctypes.c_void_p).value or 0


def _argument_buffer(extra) -> bytes | None:
    """The kernel argument buffer hipModuleLaunchKernel's ``extra`` names (HIP_LAUNCH_PARAM_BUFFER_POINTER and
    _SIZE pairs up to _END), or None without one."""
    address = _address(extra)
    if not address:
        return None
    pointer, size = None, None
    for i in range(0, 16, 2):
        key = ctypes.c_void_p.from_address(address + 8 * i).value or 0
        if key == 3:  # HIP_LAUNCH_PARAM_END
            break
        value = ctypes.c_void_p.from_address(address + 8 * (i + 1)).value or 0
        if key == 1:
            pointer = value
        elif key == 2:
            size = ctypes.c_size_t.from_address(value).value
    return ctypes.string_at(pointer, size) if pointer and size is not None else None


def _target(ref):
    """The ctypes object a byref()/pointer()/address argument points at (written through)."""
    if hasattr(ref, "_obj"):
        return ref._obj
    if isinstance(ref, ctypes._Pointer):
        return ref.contents
    if isinstance(ref, int):
        return ctypes.c_void_p.from_address(ref)
    return ref


def _set(ref, value) -> None:
    target = _target(ref)
    if isinstance(target, ctypes.Array):
        ctypes.memmove(target, value, len(value))
    else:
        target.value = value


def _text(value) -> str:
    if isinstance(value, ctypes.Array):
        value = bytes(value)
    if isinstance(value, (ctypes.c_char_p, ctypes.c_void_p)):
        value = value.value
    if isinstance(value, int):
        value = ctypes.string_at(value)
    if isinstance(value, bytes):
        return value.split(b"\0")[0].decode()
    return str(value)


class Runtime:
    """The state both fake libraries share: programs, modules and functions by handle."""

    def __init__(self, library_dir: Path, on_built=None, on_refused=None, on_compiled=None, on_code_object=None):
        self.library_dir = Path(library_dir)
        self.on_code_object = on_code_object  # called with the path of each code object loaded that the model runs
        self.on_built = on_built  # called with each library path built (launch counting, progress)
        self.on_refused = on_refused  # called with (what, why) for each call the model could not run
        # called with (program name, source, defines, includes, why not built or "") for every compile: what
        # the runner's HIPRTC compiles, for the gfx950 build check
        self.on_compiled = on_compiled
        self.programs, self.modules, self.functions = {}, {}, {}

    def _handle(self, table: dict, value) -> int:
        handle = 0x1000 + len(self.programs) + len(self.modules) + len(self.functions) + 1
        table[handle] = value
        return handle

    # -- HIPRTC ---------------------------------------------------------------------------------------
    def hiprtcCreateProgram(self, prog, src, name=None, *rest):
        _set(prog, self._handle(self.programs, {"source": _text(src), "name": _text(name or b"program"),
                                                "code": b"", "log": ""}))
        return SUCCESS

    def hiprtcCompileProgram(self, prog, count=0, options=None):
        program = self.programs[int(_target(prog).value if hasattr(_target(prog), "value") else prog)]
        source = program["source"]
        defines, includes = compile_options(count, options)  # the runner's HIPRTC compiles with them too
        try:
            # one library per set of defines: dlopen hands back a library already loaded from the same path
            key = "\0".join(defines + includes)
            variant = f"_{hashlib.sha1(key.encode()).hexdigest()[:8]}" if key else ""
            stem = re.sub(r"[^A-Za-z0-9_]", "_", program["name"]) + variant
            path = build.compile_shared([source, launchers(source, defines)], self.library_dir / f"{stem}.so",
                                        defines=defines, includes=includes)
        except build.NotModelled as error:
            self._compiled(program, defines, includes, f"the CPU model of gfx950 does not have {error}")
            raise NotModelled(f"hiprtcCompileProgram({program['name']}): {error}") from None
        except build.BuildError as error:
            # The runner's HIPRTC may compile what the model's host compiler refuses: the file sees the error
            # code HIPRTC would give for a real compile error, and the report says the HIP did not run here
            # (the gfx950 build check tells whether the runner's HIPRTC would refuse it too).
            program["log"] = str(error)
            self._compiled(program, defines, includes,
                           f"the CPU model's host compiler refused it: {str(error).splitlines()[0][:300]}")
            return 6  # HIPRTC_ERROR_COMPILATION
        self._compiled(program, defines, includes, "")
        if self.on_built:
            self.on_built(str(path))
        program["code"] = TOKEN + str(path).encode() + b"\0"
        return SUCCESS

    def _compiled(self, program: dict, defines: list, includes: list, why: str) -> None:
        if self.on_compiled:
            self.on_compiled(program["name"], program["source"], defines, includes, why)

    def _program(self, prog):
        key = prog.value if isinstance(prog, ctypes.c_void_p) else prog
        return self.programs[int(key)]

    def hiprtcGetCodeSize(self, prog, size):
        _set(size, len(self._program(prog)["code"]))
        return SUCCESS

    def hiprtcGetCode(self, prog, buffer):
        code = self._program(prog)["code"]
        ctypes.memmove(buffer, code, len(code))
        return SUCCESS

    def hiprtcGetProgramLogSize(self, prog, size):
        _set(size, len(self._program(prog)["log"]) + 1)
        return SUCCESS

    def hiprtcGetProgramLog(self, prog, buffer):
        log = self._program(prog)["log"].encode() + b"\0"
        ctypes.memmove(buffer, log, len(log))
        return SUCCESS

    def hiprtcDestroyProgram(self, prog):
        return SUCCESS

    def hiprtcGetErrorString(self, code):
        return self._c_string(b"HIPRTC_SUCCESS" if int(getattr(code, "value", code)) == 0
                              else b"HIPRTC_ERROR (hip_cpu model)")

    def _c_string(self, text: bytes) -> int:
        """The address of a NUL-terminated copy of ``text`` that lives as long as the runtime: a C function's
        ``const char*`` result, which the caller's restype (c_char_p) reads."""
        strings = self.__dict__.setdefault("strings", {})
        if text not in strings:
            strings[text] = ctypes.create_string_buffer(text)
        return ctypes.addressof(strings[text])

    # -- HIP modules ----------------------------------------------------------------------------------
    def hipModuleLoadData(self, module, image):
        if isinstance(image, ctypes.Array):
            data = bytes(image)
        elif isinstance(image, (bytes, bytearray)):
            data = bytes(image)
        else:
            address = image.value if isinstance(image, (ctypes.c_void_p, ctypes.c_char_p)) else image
            data = ctypes.string_at(address) if not isinstance(address, bytes) else address
        if not data.startswith(TOKEN):
            raise NotModelled("hipModuleLoadData of a code object the CPU model did not build (a prebuilt .hsaco)")
        path = data[len(TOKEN):].split(b"\0")[0].decode()
        _set(module, self._handle(self.modules, ctypes.CDLL(path)))
        return SUCCESS

    def hipModuleLoad(self, module, path):
        """A code object by path: aiter's f4gemm ASM kernels run as the emulated aiter's model of them
        (code_objects.py); any other is NotModelled, naming it."""
        fname = _text(path)
        try:
            code_objects.kernel_of(fname)
        except code_objects.NotModelled as error:
            raise NotModelled(str(error)) from None
        if self.on_code_object is not None:
            self.on_code_object(fname)
        _set(module, self._handle(self.modules, CodeObject(fname)))
        return SUCCESS

    def hipModuleGetFunction(self, function, module, name):
        key = module.value if isinstance(module, ctypes.c_void_p) else module
        library = self.modules[int(key)]
        kernel = _text(name)
        if isinstance(library, CodeObject):
            if not code_objects.has_function(library.path, kernel):
                return 500  # hipErrorNotFound, as HIP answers for a name the code object lacks
            _set(function, self._handle(self.functions, CodeObject(library.path, kernel)))
            return SUCCESS
        try:
            launcher = getattr(library, f"hipcpu_module_launch_{kernel}")
        except AttributeError:
            return 500  # hipErrorNotFound: no extern "C" kernel of that name
        launcher.argtypes = [ctypes.c_uint] * 7 + [ctypes.c_void_p]
        _set(function, self._handle(self.functions, launcher))
        return SUCCESS

    def hipModuleLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra=None):
        key = function.value if isinstance(function, ctypes.c_void_p) else function
        launcher = self.functions[int(key)]
        if isinstance(launcher, CodeObject):
            buffer = _argument_buffer(extra)
            if buffer is None:
                raise NotModelled("hipModuleLaunchKernel of a prebuilt code object without the 'extra' argument "
                                  "buffer (aiter's kernels take theirs there)")
            dims = [int(getattr(v, "value", v) or 0) for v in (gx, gy, gz, bx, by, bz)]
            try:
                code_objects.launch(launcher.path, launcher.name, buffer, tuple(dims[:3]), tuple(dims[3:]))
            except code_objects.NotModelled as error:
                raise NotModelled(str(error)) from None
            code_objects.LAUNCHES[0] += 1  # the file's HIP served the call (no_rocm counts it with the libraries')
            return SUCCESS
        if params is None:
            raise NotModelled("hipModuleLaunchKernel with the 'extra' argument buffer (only kernelParams is modelled)")
        launcher(*(int(getattr(v, "value", v) or 0) for v in (gx, gy, gz, bx, by, bz, shared)),
                 ctypes.cast(params, ctypes.c_void_p))
        return SUCCESS

    def hipGetErrorString(self, code):
        return self._c_string(b"hipSuccess" if int(getattr(code, "value", code)) == 0 else b"hipError (hip_cpu model)")

    def hipModuleUnload(self, module):
        return SUCCESS

    def nothing(self, *args):  # synchronisation and error queries: every launch has finished when it returns
        return SUCCESS


MODELLED = {name for name in dir(Runtime) if name.startswith(("hiprtc", "hipModule"))} | {"hipGetErrorString"}
NO_OPS = ("hipDeviceSynchronize", "hipStreamSynchronize", "hipGetLastError", "hipPeekAtLastError", "hipSetDevice",
          "hipInit", "hipCtxSynchronize")


class ModelledFunction:
    """A function of a modelled library as ctypes hands it to a file: ``restype``, ``argtypes`` and ``errcheck``
    can be set and act as on a ctypes function pointer. The arguments are checked against ``argtypes`` with
    ctypes' own errors (a wrong count is a TypeError, a wrong type a ctypes.ArgumentError), the model gets the
    file's own arguments, its C result (an int: a status, or an address for a ``const char*``) is converted
    by ``restype`` as ctypes converts (c_int by default; None gives None), and ``errcheck(result, func,
    args)`` has the last word. Files set these on every function they call (issue 39: a bound method here
    made ``lib.hiprtcCreateProgram.restype = ctypes.c_int`` an AttributeError, the file's FAIL)."""

    def __init__(self, name: str, model, on_refused=None):
        self.__name__ = name
        self._model = model
        self.on_refused = on_refused  # for a model that is not a Runtime method (an unmodelled function)
        self.restype, self.argtypes, self.errcheck = ctypes.c_int, None, None

    def __call__(self, *args):
        if self.argtypes is not None:
            needed = len(self.argtypes)
            if len(args) < needed:
                raise TypeError(f"this function takes at least {needed} argument{'s' * (needed != 1)} ({len(args)} given)")
            for position, (kind, value) in enumerate(zip(self.argtypes, args), 1):
                try:
                    kind.from_param(value)
                except Exception as error:  # noqa: BLE001 - ctypes wraps whatever from_param raised
                    raise ctypes.ArgumentError(f"argument {position}: {type(error).__name__}: {error}") from None
        try:
            value = self._model(*args)
        except NotModelled as error:
            refused = getattr(self._model, "__self__", None)
            if refused is not None and getattr(refused, "on_refused", None):
                refused.on_refused(self.__name__, str(error))
            elif self.on_refused:
                self.on_refused(self.__name__, str(error))
            raise
        result = as_restype(value, self.restype)
        return self.errcheck(result, self, args) if self.errcheck is not None else result

    def __repr__(self):
        return f"<modelled function {self.__name__} (hip_cpu)>"


def as_restype(value, restype):
    """A C function's result ``value`` (an int, or None for void) as ctypes returns it for ``restype``."""
    if restype is None:
        return None
    if isinstance(restype, type) and issubclass(restype, ctypes._SimpleCData):
        c_value = restype(value) if value is not None else restype()
        # ctypes returns the Python value of a fundamental type, the instance of a subclass of one
        return c_value.value if restype.__bases__[0] is ctypes._SimpleCData else c_value
    if isinstance(restype, type) and issubclass(restype, ctypes._Pointer):
        return ctypes.cast(ctypes.c_void_p(value), restype)
    if callable(restype):  # ctypes' deprecated form: a callable gets the C int
        return restype(ctypes.c_int(value or 0).value)
    raise TypeError(f"restype must be a type, a callable, or None, not {type(restype).__name__}")


def install_on(library, runtime: Runtime, which: str) -> None:
    """Give the ctypes library object ``library`` (a CDLL of some loadable library) the modelled functions
    as attributes, each a ``ModelledFunction``; any other function of it raises NotModelled when called
    (its restype and argtypes can still be set first, as a file does for every function it uses)."""
    for name in MODELLED:
        setattr(library, name, ModelledFunction(name, getattr(runtime, name)))
    for name in NO_OPS:
        setattr(library, name, ModelledFunction(name, runtime.nothing))

    class Strict(type(library)):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)

            def refused(*args, **kwargs):
                raise NotModelled(f"{which}.{name} is not modelled by the CPU model of gfx950 (docs/hip_cpu.md)")
            function = ModelledFunction(name, refused, runtime.on_refused)
            setattr(self, name, function)  # as CDLL caches: restype set once stays
            return function

        def __getitem__(self, name):
            return self.__getattr__(name)

    library.__class__ = Strict
