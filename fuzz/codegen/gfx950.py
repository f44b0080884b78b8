"""gfx950 code generation of the fused kernel, checked on any machine (AOT compile, no GPU).

For every config ``configs.choose`` gives the official shapes and a fixed sample of other shapes, with
both in-kernel quantizers, the fused kernel is compiled for gfx950 as a launch on an MI355X would
specialize it, and the amdgcn is checked:

- absolute (``problems``): the MFMA-scale instruction ``v_mfma_scale_f32_*_f8f6f4`` is emitted; with the
  gfx950 quantizer ``v_cvt_scalef32_pk_fp4_bf16`` is emitted (the assembler has then accepted it for
  gfx950); no VGPR spills and no scratch (memory traffic in the K loop); the LDS fits the CU's 160 KiB;
- against ``gfx950_baseline.json`` (``compare``): VGPR or SGPR spills or scratch grow, occupancy drops
  (register- or LDS-limited), or VGPRs (arch + acc, the number that limits occupancy) grow by more than
  ``vgpr_margin``: max(8, 10%). gfx950 allocates VGPRs in granules of 8, so growth inside one granule is
  free, and scheduler churn from harmless kernel edits moves counts by a few percent; the occupancy
  checks catch any growth that costs waves. A config missing from the baseline is reported, not failed.
  SGPR spills are judged against the baseline only: with no scratch they go to VGPR lanes
  (v_writelane/v_readlane, a few instructions each), and the portable quantizer's configs have them today.

Why a child process: ``import kernels`` switches the Triton interpreter on where no GPU is visible, and
Triton decides at decoration time, so there the kernel (and every ``@triton.jit`` it calls) is an
InterpretedFunction, which cannot be compiled. The compile runs in ``python -m fuzz.codegen.gfx950
--worker``, started with TRITON_INTERPRET=0, where ``@triton.jit`` gives JITFunctions as on a GPU.

Why capture the launch: the compile must see the specialization a real launch gets (pointer dtypes;
tt.divisibility on pointers and ints divisible by 16; ints equal to 1, e.g. unit strides, turned into
constexprs; AMD buffer-op pointer ranges). The worker runs the real launcher ``fused.fused_gemm`` on CPU
tensors of the launch's shapes with the kernel swapped for a recorder, and hands the recorded
arguments to Triton's own binder for a gfx950 target. No signature is typed out here.

Results are cached per (the kernel's source files, this checker, case, Triton version, compile env vars) under
``$MXFP4_FUZZ_CACHE/codegen`` (default ``~/.cache/mxfp4-fuzz/codegen``); each run that compiles uses a
fresh TRITON_CACHE_DIR, so the reported compile times are cold.

    python -m fuzz.codegen.gfx950                    # check, print the table, exit 1 on a problem
    python -m fuzz.codegen.gfx950 --update-baseline  # rewrite gfx950_baseline.json from this run
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BASELINE_PATH = Path(__file__).with_name("gfx950_baseline.json")
ARCH, WAVE_SIZE = "gfx950", 64
LDS_BYTES = 160 * 1024  # per CU on gfx950
SIMDS_PER_CU = 4
MAX_WAVES_PER_SIMD = 8
MFMA_SCALE = re.compile(r"v_mfma_scale_f32_\w+_f8f6f4")
CVT_FP4 = "v_cvt_scalef32_pk_fp4_bf16"
# Beyond the official shapes: M = 1 (an int specialized to constexpr), odd M, a K tail below block_k,
# K >= 4096 (block_k 512, split K), N not a multiple of 64, and the large-tile 8-warp branch.
SAMPLE_SHAPES = ((1, 512, 256), (7, 2880, 320), (33, 1056, 4096), (96, 160, 1536), (128, 8192, 1024),
                 (2048, 4096, 7168))


def vgpr_margin(baseline_vgprs: int) -> int:
    return max(8, math.ceil(0.1 * baseline_vgprs))


# --------------------------------------------------------------------------------------------------
# Cases


@dataclasses.dataclass(frozen=True)
class Case:
    shape: tuple  # (M, N, K) of the launch being mirrored
    quantizer: str
    config: object  # kernels.configs.FusedConfig

    @property
    def key(self) -> str:
        c = self.config
        m, n, k = self.shape
        return (f"{m}x{n}x{k}/{self.quantizer}/BM{c.block_m}xBN{c.block_n}xBK{c.block_k}"
                f"/splits{c.splits}x{c.split_k}/w{c.num_warps}/st{c.num_stages}/{c.cache_modifier or 'nocm'}")

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "quantizer": self.quantizer, "config": dataclasses.asdict(self.config)}

    @staticmethod
    def from_json(obj: dict) -> "Case":
        from kernels import configs

        return Case(tuple(obj["shape"]), obj["quantizer"], configs.FusedConfig(**obj["config"]))


def default_cases() -> list:
    """What ``configs.choose`` picks for the official shapes and SAMPLE_SHAPES, with each quantizer."""
    from kernels import configs, fused

    shapes = list(dict.fromkeys(configs.OFFICIAL_SHAPES + SAMPLE_SHAPES))
    return [Case(s, q, configs.choose(*s)) for s in shapes for q in fused.QUANTIZERS]


def spilling_case() -> Case:
    """A config past the register file: the 256x256 fp32 accumulator alone is 128 VGPRs per lane on 8
    waves, before any operand tile. It fits the LDS, so spilling is the only thing wrong with it."""
    from kernels import configs

    return Case((256, 256, 1024), "portable", configs.FusedConfig(256, 256, 256, num_warps=8))


# --------------------------------------------------------------------------------------------------
# Reading the amdgcn


@dataclasses.dataclass(frozen=True)
class Resources:
    vgpr: int  # arch VGPRs
    agpr: int  # accumulation VGPRs
    total_vgpr: int  # what the register file gives per wave (AGPRs after an aligned offset)
    sgpr: int
    vgpr_spill: int
    sgpr_spill: int
    scratch: int  # bytes of private memory per lane
    occupancy: int  # waves per SIMD the registers allow (the compiler's number)
    lds: int  # bytes of shared memory per workgroup (Triton allocates it dynamically)
    lds_occupancy: int  # waves per SIMD the LDS allows
    mfma: tuple  # distinct MFMA mnemonics
    cvt_fp4: int  # v_cvt_scalef32_pk_fp4_bf16 instructions
    code_bytes: int


def _one_int(asm: str, pattern: str, what: str) -> int:
    found = re.findall(pattern, asm, flags=re.MULTILINE)
    if len(found) != 1:
        raise ValueError(f"expected exactly one {what} in the amdgcn, found {len(found)}")
    return int(found[0])


def _comment(asm: str, name: str) -> int:
    return _one_int(asm, rf"^\s*;\s*{name}\s*[:=]\s*(\d+)", f"'; {name}'")


def _metadata(asm: str, name: str) -> int:
    return _one_int(asm, rf"^\s*{re.escape(name)}:\s*(\d+)", f"'{name}'")


def lds_occupancy(lds: int, num_warps: int) -> int:
    """Waves per SIMD when workgroups of ``num_warps`` waves each hold ``lds`` bytes of the CU's LDS."""
    if lds == 0:
        return MAX_WAVES_PER_SIMD
    return min(MAX_WAVES_PER_SIMD, (LDS_BYTES // lds) * num_warps // SIMDS_PER_CU)


def parse_amdgcn(asm: str, lds: int, num_warps: int) -> Resources:
    """Resources of the one kernel in ``asm`` (Triton's ``asm["amdgcn"]``); raises if a field is missing."""
    return Resources(
        vgpr=_comment(asm, "NumVgprs"),
        agpr=_comment(asm, "NumAgprs"),
        total_vgpr=_comment(asm, "TotalNumVgprs"),
        sgpr=_comment(asm, "TotalNumSgprs"),
        vgpr_spill=_metadata(asm, ".vgpr_spill_count"),
        sgpr_spill=_metadata(asm, ".sgpr_spill_count"),
        scratch=max(_comment(asm, "ScratchSize"), _metadata(asm, ".private_segment_fixed_size")),
        occupancy=_comment(asm, "Occupancy"),
        lds=lds,
        lds_occupancy=lds_occupancy(lds, num_warps),
        mfma=tuple(sorted(set(re.findall(r"\b(v_mfma\w*)", asm)))),
        cvt_fp4=len(re.findall(rf"\b{CVT_FP4}\b", asm)),
        code_bytes=_comment(asm, "codeLenInByte"),
    )


# --------------------------------------------------------------------------------------------------
# Checks


def problems(result: dict) -> list:
    """What is wrong with one compiled case regardless of any baseline (empty: all good)."""
    if "error" in result:
        return [f"{result['key']}: compile failed: {result['error']}"]
    r = Resources(**{**result["resources"], "mfma": tuple(result["resources"]["mfma"])})
    key = result["key"]
    found = []
    if not any(MFMA_SCALE.fullmatch(m) for m in r.mfma):
        found.append(f"{key}: no MFMA-scale instruction (v_mfma_scale_f32_*_f8f6f4); MFMAs: {list(r.mfma) or 'none'}")
    if result["case"]["quantizer"] == "gfx950" and r.cvt_fp4 == 0:
        found.append(f"{key}: the gfx950 quantizer emitted no {CVT_FP4}")
    if r.vgpr_spill:
        found.append(f"{key}: spills {r.vgpr_spill} VGPRs")
    if r.scratch:
        found.append(f"{key}: uses {r.scratch} bytes of scratch per lane")
    if r.lds > LDS_BYTES:
        found.append(f"{key}: needs {r.lds} bytes of LDS, the CU has {LDS_BYTES}")
    return found


def summary(result: dict) -> dict:
    """The per-config numbers the baseline keeps."""
    r = result["resources"]
    return {"vgpr": r["vgpr"], "agpr": r["agpr"], "total_vgpr": r["total_vgpr"], "sgpr": r["sgpr"],
            "occupancy": r["occupancy"], "lds": r["lds"], "lds_occupancy": r["lds_occupancy"],
            "vgpr_spill": r["vgpr_spill"], "sgpr_spill": r["sgpr_spill"], "scratch": r["scratch"]}


@dataclasses.dataclass
class Comparison:
    regressions: list  # failures
    new: list  # keys compiled now but absent from the baseline (reported only)
    stale: list  # keys in the baseline that no case produces any more (reported only)


def compare(results: list, baseline: dict, summarize=summary) -> Comparison:
    """``summarize(result)`` gives a result's figures (the HIP check passes its own); a field the baseline
    entry does not have is not compared."""
    known = baseline["configs"]
    regressions, new = [], []
    for result in results:
        if "error" in result:
            continue  # problems() reports it
        key = result["key"]
        if key not in known:
            new.append(key)
            continue
        now, then = summarize(result), known[key]
        for field in ("vgpr_spill", "sgpr_spill", "scratch"):
            if now[field] > then[field]:
                regressions.append(f"{key}: {field} grew {then[field]} -> {now[field]}")
        for field in ("occupancy", "lds_occupancy"):
            if field in then and now[field] < then[field]:
                regressions.append(f"{key}: {field} dropped {then[field]} -> {now[field]} waves/SIMD")
        if now["total_vgpr"] > then["total_vgpr"] + vgpr_margin(then["total_vgpr"]):
            regressions.append(f"{key}: VGPRs grew {then['total_vgpr']} -> {now['total_vgpr']} "
                               f"(margin {vgpr_margin(then['total_vgpr'])})")
    produced = {r["key"] for r in results}
    return Comparison(regressions, new, sorted(set(known) - produced))


def load_baseline(path: Path = BASELINE_PATH) -> dict:
    return json.loads(Path(path).read_text())


def write_baseline(results: list, path: Path = BASELINE_PATH) -> dict:
    import triton

    baseline = {
        "about": "gfx950 resources of the fused kernel per launch config; python -m fuzz.codegen.gfx950 --update-baseline",
        "triton": triton.__version__,
        "configs": {r["key"]: summary(r) for r in sorted(results, key=lambda r: r["key"]) if "error" not in r},
    }
    rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in baseline["configs"].items())
    head = json.dumps({k: v for k, v in baseline.items() if k != "configs"})[:-1]
    Path(path).write_text(f'{head}, "configs": {{\n{rows}\n}}}}\n')  # one line per config: diffs stay readable
    return baseline


# --------------------------------------------------------------------------------------------------
# Availability and the on-disk cache


def amd_backend_available() -> tuple:
    """(ok, reason): whether this Triton build can compile for gfx950."""
    try:
        import triton
        from triton.backends import backends
        from triton.backends.compiler import GPUTarget  # noqa: F401
    except ImportError as exc:
        return False, f"Triton cannot be imported with its backends: {exc}"
    if "amd" not in backends:
        return False, f"triton {triton.__version__} has no AMD backend (it has: {sorted(backends)})"
    return True, f"triton {triton.__version__} with the AMD backend"


def cache_dir() -> Path:
    root = os.environ.get("MXFP4_FUZZ_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mxfp4-fuzz")
    return Path(root) / "codegen"


def _compile_env() -> list:
    """Env vars that can change what Triton generates (a changed value must not hit the cache)."""
    skip = {"TRITON_CACHE_DIR", "TRITON_INTERPRET"}
    return sorted((k, v) for k, v in os.environ.items() if k.startswith(("TRITON_", "AMDGCN_")) and k not in skip)


def _code_names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


@functools.lru_cache(maxsize=None)
def kernel_sources() -> tuple:
    """Source files of the fused kernel and of every ``@triton.jit`` function it reaches, followed through
    globals as Triton does: the files whose edits can change the generated code (and no others)."""
    from triton.runtime.jit import KernelInterface

    from kernels import fused

    files, seen, todo = set(), set(), [fused.fused_mxfp4_gemm_kernel.fn]
    while todo:
        fn = todo.pop()
        if fn in seen:
            continue
        seen.add(fn)
        files.add(Path(inspect.getsourcefile(fn)).resolve())
        for name in _code_names(fn.__code__):
            value = fn.__globals__.get(name)
            if isinstance(value, KernelInterface):  # JITFunction, or InterpretedFunction in interpreter mode
                todo.append(value.fn)
            elif isinstance(value, types.ModuleType) and str(getattr(value, "__file__", "")).startswith(str(REPO_ROOT)):
                files.add(Path(value.__file__).resolve())
    return tuple(sorted(files))


def cache_key(case: Case) -> str:
    import triton

    h = hashlib.sha256()
    for path in kernel_sources() + (Path(__file__).resolve(),):
        h.update(path.read_bytes())
    h.update(json.dumps([triton.__version__, case.to_json(), _compile_env()], sort_keys=True).encode())
    return h.hexdigest()[:32]


def _cache_load(case: Case):
    path = cache_dir() / f"{cache_key(case)}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _cache_store(case: Case, result: dict) -> None:
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{cache_key(case)}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(result))
    tmp.replace(directory / f"{cache_key(case)}.json")  # atomic: parallel CI jobs may share the cache


# --------------------------------------------------------------------------------------------------
# Compiling (worker side: runs with TRITON_INTERPRET=0)


class _Launched(Exception):
    pass


class _LaunchRecorder:
    """Stands in for the kernel: ``kernel[grid](*args, **kwargs)`` records the call and stops the launcher."""

    def __init__(self):
        self.args, self.kwargs = None, None

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.args, self.kwargs = args, kwargs
            raise _Launched

        return launch


def _captured_launch(case: Case):
    """(the JITFunction, args, kwargs) of the launch ``fused.fused_gemm`` makes for ``case``."""
    import torch

    from kernels import fused

    m, n, k = case.shape
    A = torch.empty((m, k), dtype=torch.bfloat16)
    B_shuffle = torch.empty((n, k // 2), dtype=torch.uint8)
    B_scale_sh = torch.empty((math.ceil(n / 256) * 256, math.ceil(k // 32 / 8) * 8), dtype=torch.uint8)
    kernel, recorder = fused.fused_mxfp4_gemm_kernel, _LaunchRecorder()
    fused.fused_mxfp4_gemm_kernel = recorder
    try:
        fused.fused_gemm(A, B_shuffle, B_scale_sh, n, case.config, case.quantizer)
    except _Launched:
        pass
    finally:
        fused.fused_mxfp4_gemm_kernel = kernel
    if recorder.args is None:
        raise RuntimeError("fused_gemm returned without launching the kernel")
    return kernel, recorder.args, recorder.kwargs


def _specialize(jit, args, kwargs, target):
    """(options, signature, constexprs, attrs) exactly as ``JITFunction.run`` derives them on ``target``."""
    from triton import knobs
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    backend = make_backend(target)
    kwargs = dict(kwargs)
    # The options JITFunction.run adds before binding (triton 3.9).
    kwargs["debug"] = kwargs.get("debug", jit.debug) or knobs.runtime.debug
    for name in ("instrumentation_mode", "fpsan_homomorphic_casts"):
        if hasattr(knobs.compilation, name):
            kwargs[name] = getattr(knobs.compilation, name)
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    bound, specialization, options = binder(*args, **kwargs)
    return jit._pack_args(backend, kwargs, bound, specialization, options)


def compile_case(case: Case) -> dict:
    """Compile one case for gfx950 in this (JIT-mode) process and read its resources."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("hip", ARCH, WAVE_SIZE)
    jit, args, kwargs = _captured_launch(case)
    options, signature, constexprs, attrs = _specialize(jit, args, kwargs, target)
    start = time.perf_counter()
    kernel = triton.compile(ASTSource(jit, signature, constexprs, attrs), target=target, options=options.__dict__)
    seconds = time.perf_counter() - start
    names = list(signature)
    divisible = [names[path[0]] for path, attr in attrs.items() if ["tt.divisibility", 16] in attr]
    resources = parse_amdgcn(kernel.asm["amdgcn"], kernel.metadata.shared, options.num_warps)
    return {"key": case.key, "case": case.to_json(), "signature": signature, "divisible": divisible,
            "compile_s": round(seconds, 3), "triton": triton.__version__, "resources": dataclasses.asdict(resources)}


def _worker(in_path: str, out_path: str) -> None:
    os.environ["TRITON_INTERPRET"] = "0"  # before kernels is imported (the parent sets it as well)
    from triton.runtime.jit import JITFunction

    from kernels import fused

    if not isinstance(fused.fused_mxfp4_gemm_kernel, JITFunction):
        raise RuntimeError("the fused kernel was decorated in interpreter mode; run the worker with TRITON_INTERPRET=0")
    results = []
    for obj in json.loads(Path(in_path).read_text()):
        case = Case.from_json(obj)
        try:
            results.append(compile_case(case))
        except Exception as exc:  # one broken config must not hide the others' numbers
            message = f"{type(exc).__name__}: {exc}".strip()
            results.append({"key": case.key, "case": case.to_json(), "error": message[-2000:]})
    Path(out_path).write_text(json.dumps(results))


# --------------------------------------------------------------------------------------------------
# Orchestration (parent side: any process, interpreter mode or not)


def _balanced(cases: list, jobs: int) -> list:
    """Split cases over ``jobs`` workers, biggest tiles first onto the least-loaded worker."""
    def cost(case):
        c = case.config
        return c.block_m * c.block_n + c.block_n * c.block_k

    chunks, loads = [[] for _ in range(jobs)], [0] * jobs
    for case in sorted(cases, key=cost, reverse=True):
        i = loads.index(min(loads))
        chunks[i].append(case)
        loads[i] += cost(case)
    return [c for c in chunks if c]


def _compile_in_workers(cases: list, jobs: int) -> list:
    with tempfile.TemporaryDirectory(prefix="mxfp4-codegen-") as tmp:
        env = dict(os.environ, TRITON_INTERPRET="0", TRITON_CACHE_DIR=os.path.join(tmp, "triton"))
        running = []
        for i, chunk in enumerate(_balanced(cases, jobs)):
            src, dst = os.path.join(tmp, f"in{i}.json"), os.path.join(tmp, f"out{i}.json")
            Path(src).write_text(json.dumps([c.to_json() for c in chunk]))
            proc = subprocess.Popen([sys.executable, "-m", "fuzz.codegen.gfx950", "--worker", src, dst], cwd=REPO_ROOT,
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            running.append((proc, dst))
        results = []
        for proc, dst in running:
            output, _ = proc.communicate()
            if proc.returncode:
                raise RuntimeError(f"codegen worker exited with {proc.returncode}:\n{output[-4000:]}")
            results += json.loads(Path(dst).read_text())
        return results


def compile_cases(cases: list, jobs: int | None = None, use_cache: bool = True) -> list:
    """One result dict per case (in order): from the cache, or compiled in worker processes."""
    by_key = {c.key: c for c in cases}
    results, todo = {}, []
    for key, case in by_key.items():
        hit = _cache_load(case) if use_cache else None
        if hit is None:
            todo.append(case)
        else:
            results[key] = {**hit, "cached": True}
    if todo:
        jobs = jobs or min(len(todo), os.cpu_count() or 1)
        for result in _compile_in_workers(todo, jobs):
            results[result["key"]] = {**result, "cached": False}
            if "error" not in result:
                _cache_store(by_key[result["key"]], result)
    return [results[c.key] for c in cases]


def format_table(results: list) -> str:
    head = (f"{'config':<66} {'vgpr':>4} {'agpr':>4} {'tot':>4} {'sgpr':>4} {'occ':>3} {'ldsocc':>6} {'lds':>6} "
            f"{'vspill':>6} {'sspill':>6} {'compile':>7}  mfma")
    lines = [head]
    for r in results:
        if "error" in r:
            lines.append(f"{r['key']:<66} ERROR {r['error'].splitlines()[-1][:100]}")
            continue
        s = summary(r)
        when = "cached" if r.get("cached") else f"{r['compile_s']:.1f}s"
        lines.append(f"{r['key']:<66} {s['vgpr']:>4} {s['agpr']:>4} {s['total_vgpr']:>4} {s['sgpr']:>4} "
                     f"{s['occupancy']:>3} {s['lds_occupancy']:>6} {s['lds']:>6} {s['vgpr_spill']:>6} {s['sgpr_spill']:>6} "
                     f"{when:>7}  {','.join(r['resources']['mfma']) or '-'}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.codegen.gfx950", description=__doc__.split("\n\n")[0])
    parser.add_argument("--update-baseline", action="store_true", help=f"rewrite {BASELINE_PATH.name} from this run")
    parser.add_argument("--no-cache", action="store_true", help="recompile every case (cold timings)")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--json", metavar="PATH", help="also write every result to PATH")
    parser.add_argument("--worker", nargs=2, metavar=("IN", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0
    ok, reason = amd_backend_available()
    if not ok:
        print(f"cannot check gfx950 code generation: {reason}")
        return 2
    start = time.perf_counter()
    results = compile_cases(default_cases(), args.jobs, use_cache=not args.no_cache)
    print(format_table(results))
    print(f"{len(results)} configs in {time.perf_counter() - start:.1f} s ({reason})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    found = [p for r in results for p in problems(r)]
    if args.update_baseline:
        write_baseline(results)
        print(f"wrote {BASELINE_PATH}")
    elif BASELINE_PATH.exists():
        cmp = compare(results, load_baseline())
        found += cmp.regressions
        for key in cmp.new:
            print(f"new config (not in the baseline): {key}")
        for key in cmp.stale:
            print(f"baseline entry no config produces any more: {key}")
    for p in found:
        print(f"PROBLEM {p}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
