"""HIP for gfx950 built on any machine (no AMD GPU): compile device code only, read back errors and
per-kernel resources.

What a build is: ``<compiler> -x hip --offload-arch=gfx950 --cuda-device-only --no-gpu-bundle-output
-c -Rpass-analysis=kernel-resource-usage``. The device code is compiled, the ROCm device libraries are
linked in, inline asm goes through the gfx950 assembler and the code object is linked (``lld``), as in
a real build; host code is parsed and type-checked but not generated. Per kernel the compiler's own
remarks give VGPRs, AGPRs, SGPRs, VGPR/SGPR spills, scratch bytes per lane, dynamic stack, LDS bytes
per block and the occupancy (waves per SIMD) its registers and LDS allow. Errors come back as
(file, line, column, message); a ``Source`` carries a line map, so an error in text that came from
somewhere else (a Python string in a submission, a hipified copy) names the line it came from.

Which compiler (``find_toolchain``), best first:

1. ``$MXFP4_FUZZ_HIP_COMPILER`` (any of the below), else
2. ROCm's own ``hipcc`` / ``amdclang++`` (``$ROCM_PATH``, ``/opt/rocm``, ``PATH``): it brings its headers
   and device libraries. Not tested here (no ROCm on this project's machines);
3. a clang >= 20 (gfx950 arrived in LLVM 20) with HIP headers, the ROCm device libraries and ``lld``.
   On Debian bookworm: ``apt-get install clang-22 lld-22 libamdhip64-dev rocm-device-libs`` (and
   ``libthrust-dev`` for PyTorch extensions, whose ``complex.h`` includes ``thrust/complex.h``).

Each candidate must build a probe kernel for gfx950 before it is used. The packaged pieces are older
than the compiler, and three things are bridged, each measured:

- ``-nogpulib`` is not usable: the HIP headers read ``threadIdx``/``blockDim`` through ROCm
  device-library calls (``__ockl_get_local_id``...). Left unresolved, every resource figure is a symbolic
  expression and the kernel looks like it makes calls (dynamic stack, spilled call-saved registers).
  So the device libraries are linked. The packaged 5.2 set has no gfx950 ISA-version file: one is
  generated (``__oclc_ISA_version = 9500``, what ROCm's has) into a directory of links to the rest, and
  the code object version is 5 where the set has no ABI-6 file.
- HIP headers older than 6.0 (Debian's 5.2) need ``-D__AMDGCN_WAVEFRONT_SIZE=64`` and two fp16 helpers
  today's clang no longer declares: ``hip_compat/packaged_hip/hip52_compat.h``.
- ``-c`` links the device code with ``lld``; ``-S`` would not need it but passes inline asm to the output
  unchecked, while ``-c`` assembles it and reports a bad instruction at the source line.

What this cannot tell: whether the kernel computes the right numbers on an MI355X, or how fast it is.
Register counts from a clang that is not ROCm's may differ by a few from ROCm's on the same source.

    python -m fuzz.codegen.hip_gfx950                    # our fold: table, exit 1 on a problem or a regression
    python -m fuzz.codegen.hip_gfx950 --update-baseline  # after an intended change: rewrite hip_gfx950_baseline.json
    python -m fuzz.codegen.hip_gfx950 FILE.hip ...       # any HIP file: errors and resources
    python -m fuzz.codegen.hip_gfx950 --which            # the compiler it would use, or why there is none
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fuzz.codegen import gfx950
from reference.emulation import include_folders

REPO_ROOT = Path(__file__).resolve().parents[2]
FOLD_SOURCE = REPO_ROOT / "kernels" / "fold" / "fold_kernel.cu"
BASELINE_PATH = Path(__file__).with_name("hip_gfx950_baseline.json")
COMPAT_DIR = Path(__file__).with_name("hip_compat")
HIP52_COMPAT = COMPAT_DIR / "packaged_hip" / "hip52_compat.h"
ROCM_TORCH_STANDINS = COMPAT_DIR / "rocm_torch"
# ROCm 7.1 headers the packaged HIP 5.2 lacks (bf16, the OCP types), written here from the facts of their
# public API: searched after the packaged headers (-idirafter), so these serve only what those lack.
ROCM71_STANDINS = COMPAT_DIR / "rocm71" / "include"
ARCH = "gfx950"
MIN_CLANG = 20
ENV_COMPILER = "MXFP4_FUZZ_HIP_COMPILER"
BUILD_TIMEOUT = 600
INSTALL_HINT = ("install ROCm, or on Debian bookworm: apt-get install clang-22 lld-22 libamdhip64-dev "
                "rocm-device-libs libthrust-dev")
DEVICE_ONLY = ("-x", "hip", f"--offload-arch={ARCH}", "--cuda-device-only", "--no-gpu-bundle-output", "-O3",
               "-Rpass-analysis=kernel-resource-usage", "-fno-caret-diagnostics", "-fno-color-diagnostics")
PROBE = "#include <hip/hip_runtime.h>\n__global__ void probe(float* y) { y[threadIdx.x] = blockIdx.x; }\n"


# --------------------------------------------------------------------------------------------------
# Finding a compiler


@dataclasses.dataclass(frozen=True)
class Toolchain:
    kind: str  # "rocm": ROCm's hipcc/amdclang++ | "clang": a clang with packaged HIP headers and device libraries
    compiler: str  # absolute path
    version: str  # the first line of --version
    flags: tuple  # what this toolchain adds to every build (device libraries, compatibility)
    torch_flags: tuple = ()  # what it adds to builds that include PyTorch's headers
    standins: tuple = ()  # the headers (hip/...) our ROCM71_STANDINS serve to it

    def standins_included(self, text: str) -> list:
        """The stand-in headers a source includes directly (for its report line)."""
        return [h for h in self.standins if re.search(rf"#\s*include\s*[<\"]{re.escape(h)}[>\"]", text)]

    def describe(self) -> str:
        what = "ROCm" if self.kind == "rocm" else "clang with packaged HIP headers and ROCm device libraries"
        return f"{self.version} ({what}: {self.compiler})"

    @property
    def major(self) -> str:
        """'<kind> <major version>': what a register-count baseline is valid for."""
        found = re.search(r"version (\d+)", self.version)
        return f"{self.kind} {found.group(1) if found else '?'}"


def _run(cmd: list, timeout: float = 60, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def _which(name: str, dirs=()) -> str | None:
    for d in dirs:
        candidate = Path(d) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def _rocm_roots() -> list:
    return [r for r in (os.environ.get("ROCM_PATH"), os.environ.get("ROCM_HOME"), "/opt/rocm") if r]


def _candidates() -> list:
    """Compilers to try, best first (see the module docstring)."""
    explicit = os.environ.get(ENV_COMPILER)
    if explicit:
        return [explicit]
    found = []
    for root in _rocm_roots():
        found += [_which("hipcc", [f"{root}/bin"]), _which("amdclang++", [f"{root}/llvm/bin", f"{root}/bin"])]
    found += [shutil.which(f"clang++-{v}") for v in range(40, MIN_CLANG - 1, -1)] + [shutil.which("clang++")]
    unique = {}  # one entry per executable (clang++ and clang++-22 may be the same), under the name found
    for f in filter(None, found):
        unique.setdefault(os.path.realpath(shutil.which(f) or f), shutil.which(f) or f)
    return list(unique.values())


def _first_dir(paths, marker: str) -> Path | None:
    for p in paths:
        if p and (Path(p) / marker).exists():
            return Path(p)
    return None


def _hip_headers() -> Path | None:
    roots = [os.environ.get("HIP_PATH") and f"{os.environ['HIP_PATH']}/include", "/usr/include", "/usr/local/include"]
    return _first_dir(roots + [f"{r}/include" for r in _rocm_roots()], "hip/hip_runtime.h")


def _hip_major(include: Path) -> int:
    text = (include / "hip" / "hip_version.h").read_text(errors="replace") if (include / "hip" / "hip_version.h").exists() else ""
    found = re.search(r"#define\s+HIP_VERSION_MAJOR\s+(\d+)", text)
    return int(found.group(1)) if found else 0


def _hip52_fence_ir() -> str:
    """LLVM IR of ``__atomic_work_item_fence(flags, order, scope)``, which HIP 5.2's ``__syncthreads`` and
    ``__threadfence*`` call and which ROCm 5.2's device libraries defined but Debian's packaged ones do not
    (every kernel with a barrier failed to link: a false "does not build"). The same fences as LLVM IR,
    by OpenCL's enum values (order: 2 acquire, 3 release, 4 acq_rel, 5 seq_cst; scope: 1 work-group, 2
    device, 3 all devices, 4 sub-group; 0 and relaxed: no fence). weak_odr: a real definition wins. Goes
    into the generated ISA-version file, a library the driver links into every gfx950 build."""
    orders = {2: "acquire", 3: "release", 4: "acq_rel", 5: "seq_cst"}
    scopes = {1: 'syncscope("workgroup") ', 2: 'syncscope("agent") ', 3: "", 4: 'syncscope("wavefront") '}
    lines = ["define weak_odr hidden void @__atomic_work_item_fence(i32 %flags, i32 %order, i32 %scope) alwaysinline {",
             "entry:", "  switch i32 %order, label %done [" + " ".join(f"i32 {o}, label %o{o}" for o in orders) + "]"]
    for o, name in orders.items():
        lines += [f"o{o}:", "  switch i32 %scope, label %done [" + " ".join(f"i32 {c}, label %o{o}s{c}" for c in scopes) + "]"]
        for c, scope in scopes.items():
            lines += [f"o{o}s{c}:", f"  fence {scope}{name}", "  br label %done"]
    return "\n".join(lines + ["done:", "  ret void", "}"]) + "\n"


HIP52_FENCE_IR = _hip52_fence_ir()


def _device_libs() -> Path | None:
    roots = [os.environ.get("HIP_DEVICE_LIB_PATH"), "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", "/usr/lib/amdgcn/bitcode",
             "/usr/share/amdgcn/bitcode"] + [f"{r}/amdgcn/bitcode" for r in _rocm_roots()]
    return _first_dir(roots, "ockl.bc")


def cache_dir() -> Path:
    root = os.environ.get("MXFP4_FUZZ_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mxfp4-fuzz")
    return Path(root) / "hip_gfx950"


def _gfx950_device_libs(compiler: str, libs: Path) -> Path:
    """A directory with every bitcode file of ``libs`` (links) and, where it has none, a gfx950 ISA-version
    file generated by ``compiler`` (ROCm's defines ``__oclc_ISA_version = 9500``)."""
    isa = f"oclc_isa_version_{ARCH[3:]}.bc"
    if (libs / isa).exists():
        return libs
    target = cache_dir() / f"device-libs-{hashlib.sha256(f'{libs}|{compiler}|{HIP52_FENCE_IR}'.encode()).hexdigest()[:12]}"
    if (target / isa).exists():
        return target
    cache_dir().mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".device-libs-", dir=cache_dir()))
    for bc in libs.glob("*.bc"):
        (staging / bc.name).symlink_to(bc)
    ir = staging / "isa.ll"
    ir.write_text('target triple = "amdgcn-amd-amdhsa"\n@__oclc_ISA_version = linkonce_odr protected '
                  f"local_unnamed_addr addrspace(4) constant i32 {ARCH[3:]}0, align 4\n" + HIP52_FENCE_IR)
    done = _run([compiler, "--target=amdgcn-amd-amdhsa", "-nogpulib", "-x", "ir", "-c",
                 "-emit-llvm", str(ir), "-o", str(staging / isa)])
    ir.unlink()
    if done.returncode:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"cannot generate {isa}: {done.stderr.strip()[-500:]}")
    try:
        staging.rename(target)  # atomic: a parallel run that got there first wins, and the same files
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _clang_toolchain(compiler: str, version: str) -> tuple:
    """(Toolchain, "") for a clang with everything it needs, else (None, what is missing)."""
    found = re.search(r"clang version (\d+)", version)
    if not found or int(found.group(1)) < MIN_CLANG:
        return None, f"{compiler} is {version or 'not a clang'}: gfx950 needs clang >= {MIN_CLANG}"
    include = _hip_headers()
    if include is None:
        return None, f"{compiler}: no HIP headers (hip/hip_runtime.h; Debian: libamdhip64-dev)"
    libs = _device_libs()
    if libs is None:
        return None, f"{compiler}: no ROCm device libraries (ockl.bc; Debian: rocm-device-libs)"
    lld = _run([compiler, "-print-prog-name=lld"]).stdout.strip()
    if not os.path.isabs(lld) or not os.path.exists(lld):
        return None, f"{compiler}: no lld to link the device code (Debian: lld-{found.group(1)})"
    flags = [f"--rocm-device-lib-path={_gfx950_device_libs(compiler, libs)}"]
    if not (libs / "oclc_abi_version_600.bc").exists():
        flags.append("-mcode-object-version=5")
    if str(include) != "/usr/include":
        flags += ["-isystem", str(include)]
    standins = ()
    if _hip_major(include) < 6:
        flags += ["-D__AMDGCN_WAVEFRONT_SIZE=64", "-include", str(HIP52_COMPAT), "-idirafter", str(ROCM71_STANDINS)]
        standins = tuple(sorted(str(p.relative_to(ROCM71_STANDINS)) for p in ROCM71_STANDINS.rglob("*.h")
                                if not (include / p.relative_to(ROCM71_STANDINS)).exists()))
    # PyTorch's complex.h includes thrust/complex.h under HIP; Debian's thrust is NVIDIA's, usable for its
    # host-side complex type with the CPP device system (ROCm brings rocThrust instead).
    torch_flags = ("-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP",)
    return Toolchain("clang", compiler, version, tuple(flags), torch_flags, standins), ""


@functools.lru_cache(maxsize=None)
def find_toolchain() -> tuple:
    """(Toolchain, description) for the best compiler here that builds a probe kernel for gfx950, else
    (None, why not: every candidate and what it lacks)."""
    why = []
    for compiler in _candidates():
        try:
            text = _run([compiler, "--version"])
        except (OSError, subprocess.TimeoutExpired) as exc:
            why.append(f"{compiler}: {exc}")
            continue
        version = (text.stdout or text.stderr).strip().splitlines()[0] if (text.stdout or text.stderr).strip() else ""
        rocm = os.path.basename(compiler).startswith(("hipcc", "amdclang")) or re.search(r"AMD clang|\brocm|\broc-", version)
        if rocm:
            toolchain, problem = Toolchain("rocm", compiler, version, ()), ""
        else:
            try:
                toolchain, problem = _clang_toolchain(compiler, version)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
                toolchain, problem = None, f"{compiler}: {exc}"
        if toolchain is None:
            why.append(problem)
            continue
        probe = build(Source("probe.hip", PROBE), toolchain=toolchain, use_cache=False)
        if probe.ok:
            return toolchain, toolchain.describe()
        why.append(f"{compiler} cannot build for {ARCH}: {probe.first_error()}")
    if not why:
        why.append(f"no hipcc, amdclang++ or clang++ >= {MIN_CLANG} found")
    return None, "; ".join(why) + f" ({INSTALL_HINT})"


# --------------------------------------------------------------------------------------------------
# Sources and their line maps


def line_map(old: list, new: list) -> dict:
    """{line in ``new``: line in ``old``} (1-based) for lines that are the same or were rewritten in place,
    ignoring indentation. A changed run as long as the run it replaced maps line for line; in runs of
    different lengths (lines added or removed as well) each new line maps, in order, to the most similar
    old line if they are at least 60% alike."""
    old, new = [s.strip() for s in old], [s.strip() for s in new]
    mapping = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            mapping.update({j1 + k + 1: i1 + k + 1 for k in range(j2 - j1)})
        elif tag == "replace":
            for j in range(j1, j2):
                ratios = [(difflib.SequenceMatcher(None, old[i], new[j]).ratio(), i) for i in range(i1, i2)]
                ratio, i = max(ratios)
                if ratio >= 0.6:
                    mapping[j + 1] = i + 1
                    i1 = i + 1  # in order: later new lines map to later old lines
                    if i1 == i2:
                        break
    return mapping


@dataclasses.dataclass(frozen=True)
class Source:
    """Text to compile as file ``name``. Its lines come from ``origin`` (a path, for messages): line L is
    ``origin`` line ``lines[L]`` (identity when ``lines`` is None; absent: no line there, e.g. an added
    include). ``note`` says how the text was derived, for reports."""

    name: str
    text: str
    origin: str = ""
    lines: dict | None = None
    note: str = ""

    @staticmethod
    def from_file(path) -> "Source":
        path = Path(path)
        return Source(path.name, path.read_text(), str(path))

    def origin_line(self, line: int | None) -> int | None:
        if line is None:
            return None
        return line if self.lines is None else self.lines.get(line)


# --------------------------------------------------------------------------------------------------
# Reading the compiler's output


@dataclasses.dataclass(frozen=True)
class Kernel:
    """One kernel's resources, as the compiler reports them (None: a value it could not resolve)."""

    name: str  # demangled
    symbol: str
    line: int | None  # where it is defined, in the compiled text
    origin_line: int | None  # the same line where the source came from
    vgpr: int | None
    agpr: int | None
    sgpr: int | None
    vgpr_spill: int | None
    sgpr_spill: int | None
    scratch: int | None  # bytes per lane
    dynamic_stack: bool | None
    occupancy: int | None  # waves per SIMD
    lds: int | None  # bytes per workgroup (static)

    @property
    def short(self) -> str:
        """``fold_vector_kernel<14>(float const*, ...)`` -> ``fold_vector_kernel<14>`` (a baseline's key)."""
        return self.name.split("(")[0].removeprefix("void ")

    @property
    def total_vgpr(self) -> int | None:
        """The register file a wave holds: on gfx90a and later, AGPRs after the VGPRs rounded up to 4."""
        if self.vgpr is None or self.agpr is None:
            return None
        return -(-self.vgpr // 4) * 4 + self.agpr if self.agpr else self.vgpr

    @property
    def resolved(self) -> bool:
        return None not in (self.vgpr, self.agpr, self.sgpr, self.vgpr_spill, self.sgpr_spill, self.scratch,
                            self.occupancy, self.lds)

    def summary(self) -> dict:
        """The figures a baseline keeps and the JSON report shows."""
        return {"vgpr": self.vgpr, "agpr": self.agpr, "total_vgpr": self.total_vgpr, "sgpr": self.sgpr,
                "occupancy": self.occupancy, "lds": self.lds, "vgpr_spill": self.vgpr_spill,
                "sgpr_spill": self.sgpr_spill, "scratch": self.scratch, "dynamic_stack": self.dynamic_stack}

    def describe(self) -> str:
        s = self.summary()
        text = (f"{self.short}: {s['vgpr']} VGPRs, {s['agpr']} AGPRs, {s['sgpr']} SGPRs, occupancy {s['occupancy']} "
                f"waves/SIMD, LDS {s['lds']} B, scratch {s['scratch']} B/lane, spills {s['vgpr_spill']} VGPRs "
                f"{s['sgpr_spill']} SGPRs")
        return text + (", dynamic stack" if self.dynamic_stack else "")

    def findings(self) -> list:
        """What costs performance or was not resolved (empty: nothing)."""
        found, name = [], self.short
        if not self.resolved:
            found.append(f"{name}: resources not resolved by the compiler (calls an external function?)")
        if self.vgpr_spill:
            found.append(f"{name}: spills {self.vgpr_spill} VGPRs to scratch memory")
        if self.sgpr_spill:
            found.append(f"{name}: spills {self.sgpr_spill} SGPRs (to VGPR lanes)")
        if self.scratch:
            found.append(f"{name}: uses {self.scratch} bytes of scratch per lane")
        if self.dynamic_stack:
            found.append(f"{name}: dynamic stack (recursion, an indirect call or a variable-size alloca)")
        return found


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    file: str | None  # None: the compiler driver itself
    line: int | None
    column: int | None
    message: str
    origin: str = ""
    origin_line: int | None = None

    def describe(self) -> str:
        if self.file is None:
            return self.message
        if self.origin and self.origin_line is not None:
            return f"{self.origin}:{self.origin_line}: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


REMARK = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): remark:\s+(?P<key>[^:]+?):\s*(?P<value>.*?)"
                    r"(?:\s+\[-Rpass-analysis=kernel-resource-usage\])?$")
ERROR = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?:fatal )?error: (?P<message>.*)$")
DRIVER_ERROR = re.compile(r"^\S*(?:clang|hipcc|amdclang)\S*: error: (?P<message>.*)$")
LINK_ERROR = re.compile(r"^\S*(?:ld\.lld|lld)\S*: error: (?P<message>.*)$")  # the device link's own words
REMARK_FIELDS = {"TotalSGPRs": "sgpr", "VGPRs": "vgpr", "AGPRs": "agpr", "ScratchSize [bytes/lane]": "scratch",
                 "Dynamic Stack": "dynamic_stack", "Occupancy [waves/SIMD]": "occupancy", "SGPRs Spill": "sgpr_spill",
                 "VGPRs Spill": "vgpr_spill", "LDS Size [bytes/block]": "lds"}


def _value(text: str):
    if text in ("True", "False"):
        return text == "True"
    return int(text) if text.isdigit() else None  # a symbolic expression: not resolved


def demangle(symbols: list) -> dict:
    tool = shutil.which("c++filt") or shutil.which("llvm-cxxfilt")
    if not tool or not symbols:
        return {s: s for s in symbols}
    done = subprocess.run([tool], input="\n".join(symbols), capture_output=True, text=True, timeout=60)
    names = done.stdout.splitlines()
    return dict(zip(symbols, names)) if done.returncode == 0 and len(names) == len(symbols) else {s: s for s in symbols}


def parse_remarks(output: str, source: Source | None = None) -> list:
    """The kernels of ``-Rpass-analysis=kernel-resource-usage`` remarks, in the compiler's order."""
    raw = []
    for line in output.splitlines():
        found = REMARK.match(line)
        if not found:
            continue
        key, value = found.group("key").strip(), found.group("value").strip()
        if key == "Function Name":
            raw.append({"symbol": value, "line": int(found.group("line")), "file": found.group("file")})
        elif raw and key in REMARK_FIELDS:
            raw[-1][REMARK_FIELDS[key]] = _value(value)
    names = demangle([r["symbol"] for r in raw])
    kernels = []
    for r in raw:
        own = source is not None and os.path.basename(r["file"]) == source.name
        line = _name_line(source.text.splitlines(), names[r["symbol"]], r["line"]) if own else None
        kernels.append(Kernel(
            name=names[r["symbol"]], symbol=r["symbol"], line=line, origin_line=source.origin_line(line) if own else None,
            **{field: r.get(field) for field in REMARK_FIELDS.values()}))
    return kernels


def _name_line(lines: list, name: str, line: int) -> int:
    """The line naming the kernel: the remark points at its body's opening line, which may be a few
    lines below the name when the parameters wrap."""
    base = re.sub(r"<.*", "", name.split("(")[0]).split("::")[-1].split(" ")[-1]
    for at in range(min(line, len(lines)), max(0, line - 20), -1):
        if re.search(rf"\b{re.escape(base)}\s*[(<]", lines[at - 1]):
            return at
    return line


def parse_errors(output: str, source: Source | None = None) -> list:
    errors = []
    for line in output.splitlines():
        found = ERROR.match(line)
        if found:
            file, at = found.group("file"), int(found.group("line"))
            own = source is not None and os.path.basename(file) == source.name
            errors.append(Diagnostic(file, at, int(found.group("col")), found.group("message"),
                                     source.origin if own else "", source.origin_line(at) if own else None))
            continue
        found = LINK_ERROR.match(line)
        if found:
            errors.append(Diagnostic(None, None, None, f"device link (lld): {found.group('message')}"))
            continue
        found = DRIVER_ERROR.match(line)
        if found:
            errors.append(Diagnostic(None, None, None, found.group("message")))
    return errors


# --------------------------------------------------------------------------------------------------
# Building


@dataclasses.dataclass
class BuildResult:
    source: Source
    ok: bool
    errors: list  # of Diagnostic
    kernels: list  # of Kernel
    seconds: float
    command: list
    toolchain: str
    output: str = ""  # the compiler's stderr, last 8 KiB
    cached: bool = False

    def first_error(self) -> str:
        if self.errors:
            return self.errors[0].describe()
        return self.output.strip().splitlines()[-1] if self.output.strip() else "failed without a message"

    def findings(self) -> list:
        return [f for k in self.kernels for f in k.findings()]

    def to_json(self) -> dict:
        return {"name": self.source.name, "origin": self.source.origin, "note": self.source.note, "ok": self.ok,
                "errors": [dataclasses.asdict(e) | {"text": e.describe()} for e in self.errors],
                "kernels": [{"name": k.name, "symbol": k.symbol, "line": k.origin_line, **k.summary()} for k in self.kernels],
                "findings": self.findings(), "seconds": round(self.seconds, 3), "cached": self.cached,
                "toolchain": self.toolchain, "command": self.command}


def _cache_key(toolchain: Toolchain, command: list, source: Source, key_extra: str) -> str:
    h = hashlib.sha256()
    for part in (toolchain.version, toolchain.compiler, *command, source.name, source.text, key_extra,
                 *(p.read_text() for p in sorted(COMPAT_DIR.rglob("*.h"))), Path(__file__).read_text()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def build(source: Source, flags=(), include_dirs=(), toolchain: Toolchain | None = None, use_cache: bool = True,
          key_extra: str = "") -> BuildResult:
    """Compile ``source`` for gfx950 (device code only) and read back its errors and kernels. ``flags``
    come after ours (a -O or -D of the caller wins); ``key_extra`` names anything else the result depends
    on (e.g. the PyTorch version whose headers are included)."""
    if toolchain is None:
        toolchain, reason = find_toolchain()
        if toolchain is None:
            raise RuntimeError(reason)
    command = [*DEVICE_ONLY, *toolchain.flags, *[f"-I{d}" for d in include_dirs], *flags]
    # what the include folders hold is part of the result: a header that appeared or was edited since
    folders = include_folders.fingerprint(include_folders.named(command), also_stable=(COMPAT_DIR,))
    path = cache_dir() / f"{_cache_key(toolchain, command, source, key_extra + folders)}.json"
    if use_cache and path.exists():
        stored = json.loads(path.read_text())
        return _result(source, toolchain, stored["command"], stored["returncode"], stored["output"], stored["seconds"], True)
    with tempfile.TemporaryDirectory(prefix="mxfp4-hip-") as tmp:
        (Path(tmp) / source.name).write_text(source.text)
        argv = [toolchain.compiler, *command, "-c", source.name, "-o", "kernel.co"]
        start = time.perf_counter()
        try:
            done = _run(argv, timeout=BUILD_TIMEOUT, cwd=tmp)
            returncode, output = done.returncode, done.stderr + done.stdout
        except subprocess.TimeoutExpired:
            returncode, output = -1, f"{toolchain.compiler}: error: no result within {BUILD_TIMEOUT} s"
        seconds = time.perf_counter() - start
    if use_cache and returncode >= 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp_path = path.with_suffix(f".{os.getpid()}.tmp")
        tmp_path.write_text(json.dumps({"command": argv, "returncode": returncode, "output": output, "seconds": seconds}))
        tmp_path.replace(path)  # atomic: parallel runs may share the cache
    return _result(source, toolchain, argv, returncode, output, seconds, False)


def _result(source, toolchain, argv, returncode, output, seconds, cached) -> BuildResult:
    errors = parse_errors(output, source)
    ok = returncode == 0 and not errors
    if returncode != 0 and not errors:
        errors = [Diagnostic(None, None, None, (output.strip().splitlines() or ["exit code %d" % returncode])[-1])]
    kernels = parse_remarks(output, source) if ok else []
    return BuildResult(source, ok, errors, kernels, seconds, argv, toolchain.describe(), output[-8192:], cached)


# --------------------------------------------------------------------------------------------------
# Our fold: absolute problems and the baseline


def fold_source() -> Source:
    return Source.from_file(FOLD_SOURCE)


def build_fold(source: Source | None = None, use_cache: bool = True) -> BuildResult:
    return build(source or fold_source(), flags=["-std=c++17"], include_dirs=[str(FOLD_SOURCE.parent)],
                 use_cache=use_cache)


def fold_instantiations(text: str) -> set:
    """The kernels ``fold_launch`` can start: the scalar kernel and every vector instantiation it names."""
    counts = {int(s) for s in re.findall(r"fold_vector_kernel<(\d+)>", text)}
    return {"fold_scalar_kernel"} | {f"fold_vector_kernel<{s}>" for s in counts}


def problems(result: BuildResult) -> list:
    """What is wrong with a build of the fold regardless of any baseline (empty: all good). Spills, scratch,
    a dynamic stack and unresolved figures fail; SGPR spills are judged against the baseline only, as in
    the Triton check."""
    if not result.ok:
        return [f"does not build for {ARCH}: {e.describe()}" for e in result.errors]
    found = [f for k in result.kernels for f in k.findings() if "SGPRs (to VGPR lanes)" not in f]
    missing = fold_instantiations(result.source.text) - {k.short for k in result.kernels}
    found += [f"no kernel {name} in the code object" for name in sorted(missing)]
    return found


def summaries(result: BuildResult) -> list:
    """The fold's kernels as results ``gfx950.compare`` reads: {"key", "summary"}."""
    return [{"key": k.short, "summary": k.summary()} for k in result.kernels]


def compare(result: BuildResult, baseline: dict) -> gfx950.Comparison:
    """The Triton check's rule on the fold's kernels: spills or scratch grow, occupancy drops, or VGPRs
    (arch + acc) grow by more than max(8, 10%)."""
    return gfx950.compare(summaries(result), baseline, summarize=lambda r: r["summary"])


def load_baseline(path: Path = BASELINE_PATH) -> dict:
    return json.loads(Path(path).read_text())


def write_baseline(result: BuildResult, toolchain: Toolchain, path: Path = BASELINE_PATH) -> dict:
    rows = {r["key"]: {k: v for k, v in r["summary"].items() if k != "dynamic_stack"}
            for r in sorted(summaries(result), key=lambda r: r["key"])}
    head = {"about": "gfx950 resources of kernels/fold/fold_kernel.cu per kernel; python -m fuzz.codegen.hip_gfx950 "
                     "--update-baseline", "compiler": toolchain.major, "version": toolchain.version}
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in rows.items())
    Path(path).write_text(f'{json.dumps(head)[:-1]}, "configs": {{\n{lines}\n}}}}\n')  # one line per kernel
    return {**head, "configs": rows}


def format_table(result: BuildResult) -> str:
    lines = [f"{'kernel':<28} {'line':>5} {'vgpr':>4} {'agpr':>4} {'tot':>4} {'sgpr':>4} {'occ':>3} {'lds':>6} "
             f"{'scratch':>7} {'vspill':>6} {'sspill':>6}"]
    for k in result.kernels:
        s = k.summary()
        lines.append(f"{k.short:<28} {k.origin_line or '-':>5} {s['vgpr']:>4} {s['agpr']:>4} {s['total_vgpr']:>4} "
                     f"{s['sgpr']:>4} {s['occupancy']:>3} {s['lds']:>6} {s['scratch']:>7} {s['vgpr_spill']:>6} "
                     f"{s['sgpr_spill']:>6}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.codegen.hip_gfx950", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="HIP files to build instead of our fold (errors and resources)")
    parser.add_argument("--update-baseline", action="store_true", help=f"rewrite {BASELINE_PATH.name} from this run")
    parser.add_argument("--no-cache", action="store_true", help="rebuild (cold timings)")
    parser.add_argument("--json", metavar="PATH", help="also write the results to PATH")
    parser.add_argument("--which", action="store_true", help="only say which compiler would be used (exit 2: none)")
    args = parser.parse_args(argv)
    toolchain, reason = find_toolchain()
    if toolchain is None:
        print(f"cannot build HIP for {ARCH} here: {reason}")
        return 2
    print(f"compiler: {reason}")
    if args.which:
        return 0
    if args.files:
        results = [build(Source.from_file(f), include_dirs=[str(Path(f).resolve().parent)], use_cache=not args.no_cache)
                   for f in args.files]
        for r in results:
            print(f"{r.source.origin}: {'builds' if r.ok else 'FAILS'} in {r.seconds:.1f} s" + (" (cached)" if r.cached else ""))
            for e in r.errors:
                print(f"  error {e.describe()}")
            print("\n".join("  " + line for line in format_table(r).splitlines()) if r.kernels else "")
            for f in r.findings():
                print(f"  finding {f}")
        if args.json:
            Path(args.json).write_text(json.dumps([r.to_json() for r in results], indent=1))
        return 0 if all(r.ok for r in results) else 1
    result = build_fold(use_cache=not args.no_cache)
    print(format_table(result))
    print(f"{FOLD_SOURCE.relative_to(REPO_ROOT)}: {len(result.kernels)} kernels in {result.seconds:.2f} s"
          + (" (cached)" if result.cached else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json(), indent=1))
    found = problems(result)
    if args.update_baseline and result.ok:
        write_baseline(result, toolchain)
        print(f"wrote {BASELINE_PATH}")
    elif BASELINE_PATH.exists():
        baseline = load_baseline()
        if baseline["compiler"] != toolchain.major:
            print(f"baseline is for {baseline['compiler']}, this is {toolchain.major}: not compared")
        else:
            cmp = compare(result, baseline)
            found += cmp.regressions
            for key in cmp.new + cmp.stale:
                print(f"{'new kernel (not in the baseline)' if key in cmp.new else 'baseline kernel gone'}: {key}")
    for p in found:
        print(f"PROBLEM {p}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
