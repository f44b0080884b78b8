"""Build a submission's HIP source for the CPU model (include/hip_cpu_runtime.h): translate what a host
compiler cannot parse (``<<<grid, block>>>`` launches, ``extern __shared__`` arrays), refuse what the model
does not cover by name (an unmodelled ``__builtin_amdgcn_*``, inline asm), compile with clang++ into a
shared library. clang++, not g++: real kernels declare their operands with ``ext_vector_type``, which g++
lacks.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from reference.emulation import include_folders, runner_paths

INCLUDE = Path(__file__).resolve().parent / "include"
HEADER = INCLUDE / "hip_cpu_runtime.h"
CLANGS = ("clang++", "clang++-22", "clang++-21", "clang++-20", "clang++-19", "clang++-18")
# The amdgcn builtins the model implements (include/); any other is NOT RUN, named.
MODELLED_BUILTINS = frozenset({
    "__builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4", "__builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4",
    "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", "__builtin_amdgcn_mfma_f32_16x16x32_bf16",
    "__builtin_amdgcn_cvt_scalef32_pk_fp4_f32", "__builtin_amdgcn_cvt_scalef32_pk_fp4_bf16",
    "__builtin_amdgcn_cvt_scalef32_pk_f32_fp4",
    "__builtin_amdgcn_ds_bpermute", "__builtin_amdgcn_readfirstlane", "__builtin_amdgcn_mbcnt_lo",
    "__builtin_amdgcn_mbcnt_hi", "__builtin_amdgcn_s_barrier", "__builtin_amdgcn_s_waitcnt",
    "__builtin_amdgcn_sched_barrier", "__builtin_amdgcn_s_setprio", "__builtin_amdgcn_workitem_id_x",
    "__builtin_amdgcn_workgroup_id_x",
    "__builtin_amdgcn_make_buffer_rsrc", "__builtin_amdgcn_fmed3f", "__builtin_amdgcn_fmed3h",
    "__builtin_amdgcn_readlane", "__builtin_amdgcn_sched_group_barrier", "__builtin_amdgcn_iglp_opt",
    "__builtin_amdgcn_s_sleep", "__builtin_amdgcn_perm",
    *(f"__builtin_amdgcn_raw_buffer_{op}_b{bits}" for op in ("load", "store") for bits in (8, 16, 32, 64, 96, 128)),
})
# Declared by the model so that sources and headers using them build; a launch that reaches one ends NOT RUN,
# named (include/hip_cpu_lanes.h, hip_cpu_gfx950.h, hip_cpu_buffer.h)
DECLARED_BUILTINS = frozenset({
    "__builtin_amdgcn_mov_dpp", "__builtin_amdgcn_update_dpp", "__builtin_amdgcn_cvt_pk_fp8_f32",
    "__builtin_amdgcn_cvt_f32_fp8", "__builtin_amdgcn_cvt_pk_f32_fp8", "__builtin_amdgcn_raw_ptr_buffer_load_lds",
})
INLINE_ASM = re.compile(r"\b(?:asm|__asm__)\s*(?:volatile|__volatile__)?\s*\(")
LAUNCH = re.compile(r"<<<(.*?)>>>\s*\(", re.DOTALL)
EXTERN_SHARED = re.compile(r"extern\s+__shared__\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?([\w:<>\s]+?)\s*(\w+)\s*\[\s*\]\s*;")
CACHE = Path(tempfile.gettempdir()) / "mxfp4-fuzz-hip-cpu"
# The model's compile flags, for the hipcc and HIPRTC routes and load_inline's (whose -std is torch's) alike. -O2: the switch from -O1
# cost nothing measurable in build time (1.1 s to 1.2 s for the example GEMM; a load_inline build is torch's
# headers either way) and halved the example GEMM's run time (docs/hip_cpu.md, Speed). -ffp-contract=off: a
# mul and an add round separately, whatever the host (x86-64 without -march has no FMA to contract into;
# an aarch64 host would otherwise fuse them); no -ffast-math anywhere.
MODEL_FLAGS = ("-O2", "-ffp-contract=off", "-w")


class NotModelled(RuntimeError):
    """The source uses something the CPU model of gfx950 does not have: NOT RUN, named."""


class BuildError(RuntimeError):
    """The host compiler refused the translated source (its first errors are the message)."""


def find_clang() -> str | None:
    return next((found for name in CLANGS if (found := shutil.which(name))), None)


# A function declared as an LLVM intrinsic by its asm label: ``extern "C" __device__ v4f f(v8i, ...)
# __asm("llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4");`` (real files declare the scaled MFMA so)
INTRINSIC_LABEL = re.compile(r'(?:__asm__|__asm|asm)\s*\(\s*"llvm\.amdgcn\.([\w.]+)"\s*\)\s*;')
NOT_A_NAME = frozenset({"__attribute__", "__declspec", "alignas", "__launch_bounds__"})


def intrinsic_declarations(source: str) -> list:
    """[(start, end, declared name, the clang builtin of that intrinsic)] of each declaration in ``source`` that
    names an amdgcn intrinsic by its asm label (the builtin: ``__builtin_amdgcn_`` + the intrinsic's name with
    dots as underscores, as clang names them)."""
    found = []
    for label in INTRINSIC_LABEL.finditer(source):
        start = max(source.rfind(c, 0, label.start()) for c in ";{}") + 1
        while True:  # not the preprocessor lines, comments or blank lines before the declaration
            line_end = source.find("\n", start, label.start())
            line = source[start:line_end if line_end >= 0 else label.start()].strip()
            if line_end < 0 or (line and not line.startswith(("#", "//"))):
                break
            start = line_end + 1
        names = [n for n in re.findall(r"(\w+)\s*\(", source[start:label.start()]) if n not in NOT_A_NAME]
        if names:
            found.append((start, label.end(), names[0], "__builtin_amdgcn_" + label.group(1).replace(".", "_")))
    return found


def unmodelled(source: str) -> list:
    """What of ``source`` the model cannot run: unmodelled builtins (also those declared by an intrinsic's asm
    label) and inline asm (but the single gfx950 instructions ``translate_asm`` turns into the model's
    builtins), named."""
    named = re.findall(r"__builtin_amdgcn_\w+", source) + [b for *_, b in intrinsic_declarations(source)]
    found = sorted({m for m in named if m not in MODELLED_BUILTINS | DECLARED_BUILTINS})
    leftover = [_asm_template(statement) or "" for statement, replacement in asm_statements(source)
                if replacement is None]
    if leftover:
        mnemonics = sorted({template.split()[0] if template.split() else "?" for template in leftover})
        found.append(f"inline asm ({', '.join(mnemonics[:4])})")
    return found


# -- inline asm: the gfx950 instructions the model has (their semantics: reference/emulation/gfx950_asm.py) --

# mnemonic -> (the model's builtin, its register operands after vdst, how each is read)
MODELLED_ASM = {
    "v_cvt_scalef32_pk_fp4_bf16": ("__builtin_amdgcn_cvt_scalef32_pk_fp4_bf16_cpu", ("bf16x2", "f32")),
    "v_cvt_scalef32_pk_fp4_f32": ("__builtin_amdgcn_cvt_scalef32_pk_fp4_f32_cpu", ("f32", "f32", "f32")),
}
_ASM_OPERAND = re.compile(r'^\s*"([^"]*)"\s*\((.*)\)\s*$', re.DOTALL)


def _outside_strings(text: str, start: int = 0):
    """(index, character, bracket depth) of every character of ``text`` from ``start`` outside C string
    literals; the depth counts (, [ and { still open before the character."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        else:
            depth -= c in ")]}"
            yield i, c, depth
            depth += c in "([{"
        i += 1


def _balanced_end(text: str, start: int) -> int:
    """Index just past the parenthesis that closes the one at ``start``, or -1."""
    for i, c, depth in _outside_strings(text, start):
        if c == ")" and depth == 0:
            return i + 1
    return -1


def _split_asm(body: str) -> list:
    """The ':'-separated sections of an asm statement's parentheses (string literals and brackets kept)."""
    parts, start = [], 0
    for i, c, depth in _outside_strings(body):
        if c == ":" and depth == 0:  # operand expressions sit in parentheses: a "::" of theirs is deeper
            parts.append(body[start:i])
            start = i + 1
    return parts + [body[start:]]


def _asm_template(statement: str) -> str | None:
    body = statement[statement.index("(") + 1:-1]
    literals = re.findall(r'"((?:[^"\\]|\\.)*)"', _split_asm(body)[0])
    return "".join(literals).replace("\\n", "\n").replace("\\t", " ").strip() if literals else None


# Operand-free instructions the model has as builtins: a wait for outstanding memory counters (the model's
# memory operations complete at once) and the workgroup barrier.
MODELLED_BARE_ASM = {"s_waitcnt": "__builtin_amdgcn_s_waitcnt(0)", "s_barrier": "__builtin_amdgcn_s_barrier()"}


def _translate_one(statement: str) -> str | None:
    """C++ for one asm statement of a single modelled instruction, or None (not modelled)."""
    template = _asm_template(statement)
    sections = _split_asm(statement[statement.index("(") + 1:-1])
    bare = re.fullmatch(r"(s_waitcnt)(?:\s+(?:(?:vmcnt|lgkmcnt|expcnt)\(\d+\)[\s&]*)+)?|(s_barrier)", template or "")
    if bare and all(not section.strip() or section.strip() == '"memory"' for section in sections[1:]):
        return MODELLED_BARE_ASM[bare.group(1) or bare.group(2)]
    if template is None or len(sections) < 3 or "\n" in template or ";" in template:
        return None
    found = re.fullmatch(r"(\w+)\s+%0\s*((?:,\s*%\d\s*)+)(?:\s+op_sel:\[([01]),([01]),([01]),([01])\])?", template)
    if not found or found.group(1) not in MODELLED_ASM:
        return None
    builtin, reads = MODELLED_ASM[found.group(1)]
    numbers = [int(n) for n in re.findall(r"\d", found.group(2))]
    outputs, inputs = _operands(sections[1]), _operands(sections[2])
    operands = [_ASM_OPERAND.match(o) for o in outputs + inputs]
    if len(outputs) != 1 or None in operands or len(numbers) != len(reads):
        return None
    constraint, destination = operands[0].group(1), operands[0].group(2)
    if constraint not in ("=v", "+v", "=&v"):
        return None
    values = [operands[n].group(2) if 0 < n < len(operands) else None for n in numbers]
    if None in values:
        return None
    sel = int(found.group(5) or 0) | (int(found.group(6) or 0) << 1)  # op_sel[3:2]: the destination byte
    args = [f"::hipcpu::asm_{kind}({value})" for kind, value in zip(reads, values)]
    scale_bits = f"::hipcpu::asm_u32({values[-1]})"
    # "+v": vdst's other bytes are its old value; "=v": whatever the register held, which the register
    # allocator may make the scale's own register (gfx950_asm.py, note [7]): its bits, to show a missing & 0xFF
    old = f"::hipcpu::asm_u32({destination})" if constraint == "+v" else scale_bits
    return (f"do {{ unsigned hipcpu_asm_old = {old}; ::hipcpu::asm_store({destination}, "
            f"{builtin}(hipcpu_asm_old, {', '.join(args)}, {sel})); }} while (0)")


def _operands(section: str) -> list:
    return [part for part in _split_top(section) if part.strip()] if section.strip() else []


def asm_statements(source: str) -> list:
    """[(statement text, its C++ replacement or None)] for every inline asm statement of ``source``."""
    found = []
    for m in INLINE_ASM.finditer(source):
        end = _balanced_end(source, m.end() - 1)
        if end < 0:
            found.append((source[m.start():], None))
            continue
        statement = source[m.start():end]
        found.append((statement, _translate_one(statement)))
    return found


def translate_asm(source: str) -> str:
    """Each inline asm statement of one modelled gfx950 instruction replaced by the model's builtin."""
    for statement, replacement in asm_statements(source):
        if replacement is not None:
            source = source.replace(statement, replacement, 1)
    return source


def _callee_start(text: str, end: int) -> int:
    """Where the kernel expression before ``<<<`` at ``end`` starts: back over white space (real files put
    ``<<<grid, block>>>`` on the line after ``kernel<M, K>``), a name, ``::`` and a template argument list."""
    i, depth = end, 0
    while i > 0 and text[i - 1].isspace():
        i -= 1
    while i > 0:
        c = text[i - 1]
        if c == ">":
            depth += 1
        elif c == "<":
            depth -= 1
        elif depth == 0 and not (c.isalnum() or c in "_:"):
            break
        i -= 1
    return i


def _split_top(text: str) -> list:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def translate(source: str) -> str:
    """``k<<<g, b[, shared[, stream]]>>>(args)`` -> ``hipLaunchKernelGGL((k), g, b, shared, stream, args)``;
    ``extern __shared__ T name[];`` -> a pointer to the launch's dynamic LDS; the modelled inline asm
    instructions -> the model's builtins; a declaration of an amdgcn intrinsic by its asm label -> its builtin."""
    source = translate_asm(source)
    for start, end, name, builtin in reversed(intrinsic_declarations(source)):
        # the declaration goes; its name, if another, becomes the builtin (which the model's header defines)
        source = source[:start] + ("" if name == builtin else f"\n#define {name} {builtin}\n") + source[end:]
    source = EXTERN_SHARED.sub(lambda m: f"{m.group(1)}* {m.group(2)} = ({m.group(1)}*)::hipcpu::dynamic_shared();",
                               source)
    out, pos = [], 0
    for m in LAUNCH.finditer(source):
        start = _callee_start(source, m.start())
        kernel = source[start:m.start()].strip()
        config = _split_top(m.group(1)) + ["0", "0"]
        grid, block, shared, stream = config[0], config[1], config[2] or "0", config[3] or "0"
        args_start = m.end()
        depth, j = 1, args_start
        while j < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[j], 0)
            j += 1
        args = source[args_start:j - 1].strip()
        out.append(source[pos:start])
        out.append(f"hipLaunchKernelGGL(({kernel}), {grid}, {block}, {shared}, {stream}{', ' + args if args else ''})")
        pos = j
    out.append(source[pos:])
    return "".join(out)


# -- the headers a build includes from its own folders (-I DIR): aiter's opus.hpp, a file's own headers --

HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inc", ".inl", ".ipp", ".tcc")
HEADER_BYTES = 4 << 20  # larger files are not read as headers


def translate_header(text: str, name: str) -> str:
    """A header for the model: ``translate``, then each inline asm statement the model lacks replaced by a
    NOT RUN at run time (a header's helpers are declared for every includer, called by few: an unused asm
    helper must not refuse the build, a used one ends its launch NOT RUN, named)."""
    text = translate(text)
    for statement, replacement in reversed(asm_statements(text)):
        if replacement is None:
            mnemonic = (_asm_template(statement) or "?").split() or ["?"]
            refusal = f'::hipcpu::not_modelled("inline asm ({mnemonic[0]}) in {name}")'
            at = text.rfind(statement)
            text = text[:at] + refusal + text[at + len(statement):]
    return text


# What ``translate_header`` changes: a header without any of these is read as it is
NEEDS_TRANSLATION = (INLINE_ASM, EXTERN_SHARED, LAUNCH, INTRINSIC_LABEL)


@functools.lru_cache(maxsize=64)
def _headers_to_translate(folder: str, fingerprint: str) -> bool:
    """Whether a header under ``folder`` holds what the model translates (inline asm, ``extern __shared__``
    arrays, ``<<<>>>`` launches, intrinsics declared by asm label); ``fingerprint``, the folder's state, is the
    cache key: every fresh module of a file builds again, and a folder's headers are read once per state."""
    seen = 0
    for root, _, files in os.walk(folder, followlinks=False):  # links inside: not followed (a cycle never ends)
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(HEADER_SUFFIXES) and os.path.getsize(path) <= HEADER_BYTES:
                seen += 1
                if seen > include_folders.MAX_FILES:
                    return False  # a whole system tree: read as it is
                with open(path, errors="replace") as handle:
                    text = handle.read()
                if any(pattern.search(text) for pattern in NEEDS_TRANSLATION):
                    return True
    return False


def staged_include_folder(folder: str) -> str:
    """``folder`` itself, or where its headers hold what the model translates, a copy of its headers translated
    by ``translate_header`` (cached by the folder's fingerprint; relative includes between them still resolve)."""
    if not os.path.isdir(folder) or include_folders.is_stable(folder):
        return folder
    state = include_folders.fingerprint([folder])
    key = hashlib.sha256(f"{folder}\0{state}\0{model_digest()}".encode()).hexdigest()[:16]
    staged = CACHE / "headers" / key
    if staged.is_dir():
        return str(staged)
    if not _headers_to_translate(folder, state):
        return folder
    partial = CACHE / "headers" / f".{key}.{os.getpid()}"
    partial.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs:  # a linked folder inside: linked as it is (its headers read untranslated)
            if os.path.islink(os.path.join(root, name)):
                link = partial / os.path.relpath(os.path.join(root, name), folder)
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(os.path.realpath(os.path.join(root, name)))
        for name in files:
            path = os.path.join(root, name)
            if not name.endswith(HEADER_SUFFIXES) or os.path.getsize(path) > HEADER_BYTES:
                continue
            target = partial / os.path.relpath(path, folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(path, errors="replace") as handle:
                target.write_text(translate_header(handle.read(), os.path.relpath(path, folder)))
    try:
        os.replace(partial, staged)
    except OSError:  # another process staged it first
        shutil.rmtree(partial, ignore_errors=True)
    return str(staged)


def model_include_flags(flags) -> list:
    """A build's flags with each include folder (``-I DIR``, ``-IDIR``, ``-isystem DIR``) replaced by its
    staged copy where its headers need translating for the model."""
    return include_folders.mapped(flags, staged_include_folder)


LAST_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[^\n]*\n", re.MULTILINE)
# After the source's own includes (never inside torch's headers): its device checks ask what the tier's
# "cuda" tensors are, and on this tier they are CPU tensors, as the model's kernels need.
TORCH_DEVICE_NAMES = "#define is_cuda is_cpu\n#define kCUDA kCPU\n"


def translate_torch(source: str) -> str:
    """A load_inline source for the model: ``translate`` plus the CPU model's ATen/c10 stand-ins first and
    the device renames after the source's last include."""
    text = translate(source)
    includes = list(LAST_INCLUDE.finditer(text))
    at = includes[-1].end() if includes else 0
    return "#include <hip_cpu_torch.h>\n" + text[:at] + TORCH_DEVICE_NAMES + text[at:]


def compile_shared(sources: list, output: Path, defines=(), includes=(), timeout: float = 300.0) -> Path:
    """``sources`` (texts) translated and compiled into the shared library ``output`` (cached by content).
    Raises NotModelled naming what the model lacks, BuildError with the compiler's first errors."""
    text = "\n".join(sources)
    missing = unmodelled(text)
    if missing:
        raise NotModelled("the CPU model of gfx950 does not have " + ", ".join(missing[:6]))
    clang = find_clang()
    if clang is None:
        raise NotModelled("no clang++ here to build HIP for the CPU model (Debian: apt-get install clang)")
    translated = translate(text)
    flags = ["-std=c++17", *MODEL_FLAGS, "-fPIC", "-shared", "-include", str(HEADER), "-I", str(INCLUDE)]
    flags += [f"-D{d}" for d in defines] + model_include_flags(runner_paths.mapped_flags([f"-I{i}" for i in includes]))
    folders = include_folders.fingerprint(include_folders.named(flags))  # the headers they hold, too
    key = hashlib.sha256("\0".join([translated, clang, *flags, model_digest(), folders]).encode()).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"{key}.so"
    if not cached.exists():
        source_file = CACHE / f"{key}.cpp"
        source_file.write_text(translated)
        tmp = CACHE / f".{key}.{os.getpid()}.so"
        done = subprocess.run([clang, *flags, "-x", "c++", str(source_file), "-o", str(tmp)], capture_output=True,
                              text=True, timeout=timeout)
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line][:4]
            raise BuildError("; ".join(errors) or done.stderr.strip()[-400:])
        os.replace(tmp, cached)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.resolve() != cached.resolve():
        # A new file renamed over the old: a file that builds to the same path again (a fresh module of
        # it) may have the old library loaded, and writing into that file in place crashes its process.
        staged = output.with_name(f".{output.name}.{os.getpid()}.tmp")
        shutil.copyfile(cached, staged)
        os.replace(staged, output)
    return output


def torch_extension_flags() -> list:
    """The flags torch's CPU extension build gives every translation unit of the model's builds, but the
    extension's name (torch.utils.cpp_extension: its common flags, include paths and C++ standard), then ours."""
    import inspect
    import sysconfig

    from torch.utils import cpp_extension

    standard = re.search(r"-std=c\+\+\d+", inspect.getsource(cpp_extension._write_ninja_file_to_build_library))
    includes = [*cpp_extension.include_paths(), sysconfig.get_paths()["include"]]
    return ["-DTORCH_API_INCLUDE_EXTENSION_H", *cpp_extension._get_pybind11_abi_build_flags(), "-I", str(INCLUDE),
            *[f for path in includes for f in ("-isystem", path)], "-fPIC",
            standard.group(0) if standard else "-std=c++17", *MODEL_FLAGS, f"-DHIP_CPU_MODEL_DIGEST={model_digest()}"]


def torch_pch(clang: str) -> Path | None:
    """A precompiled header of the model's runtime and torch/extension.h for the model's torch extension builds
    (load_inline, load), or None where it cannot be built. Their one translation unit spends most of its
    time parsing those headers: measured on a real file's extension, 18.1 s without, 8.6 s with; the header
    itself costs 15 s once per machine (cached by clang, torch, the model and the flags, under CACHE). A
    build the header does not fit (other language options) fails at once and the caller builds without it."""
    import fcntl

    import torch

    flags = torch_extension_flags()
    key = hashlib.sha256("\0".join([clang, torch.__version__, *flags]).encode()).hexdigest()[:16]
    pch = CACHE / f"torch-extension-{key}.pch"
    if pch.exists():
        return pch
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".torch-extension-{key}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # one build per machine; the others wait and take it
        if pch.exists():
            return pch
        source = CACHE / f"torch-extension-{key}.h"
        source.write_text(f'#include "{HEADER.name}"\n#include <torch/extension.h>\n')
        staged = CACHE / f".torch-extension-{key}.{os.getpid()}.pch"
        try:
            done = subprocess.run([clang, *flags, "-x", "c++-header", str(source), "-o", str(staged)],
                                  capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            staged.unlink(missing_ok=True)
            return None
        os.replace(staged, pch)
    return pch


def model_digest() -> str:
    """A digest of the model's headers: part of every build's cache key (torch's load_inline cache sees it as a
    define, since torch hashes only the sources it is given, not the headers they include)."""
    text = "\0".join(f"{p.relative_to(INCLUDE)}\0{p.read_text()}" for p in sorted(INCLUDE.rglob("*.h")))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
