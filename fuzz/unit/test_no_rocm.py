"""HIP built at runtime on the CPU tier (reference/emulation/no_rocm.py): the build fails at once, as on
a machine without ROCm, and the attempt is remembered. Run in a fresh interpreter (process-wide patches)."""
from __future__ import annotations

import pytest

from fuzz.testing.fresh_process import run_fresh
from reference.emulation import no_rocm
from reference.emulation.hip_cpu import build


def run_script(body: str):
    return run_fresh("from reference.emulation import no_rocm\nassert no_rocm.install()\n", body)


def test_load_inline_with_hip_sources_fails_fast_and_is_recorded():
    """On the CPU tier HIP sources go to the CPU model of gfx950 (docs/hip_cpu.md); one it cannot run (an
    unmodelled builtin) is refused at once, by name, as an OSError, and the attempt says why."""
    result = run_script("""
        import time
        from torch.utils.cpp_extension import load_inline
        t = time.perf_counter()
        try:
            load_inline("merge", cpp_sources="void f();",
                        cuda_sources="__global__ void k(int* x) { x[0] = __builtin_amdgcn_s_getpc(); }",
                        functions=["f"], extra_cuda_cflags=["--offload-arch=gfx950"])
        except OSError as e:
            print(type(e).__name__, isinstance(e, no_rocm.RocmUnavailable), time.perf_counter() - t < 1.0)
        (a,) = no_rocm.attempts()
        print(a.api, a.name, a.where == "<string>:8", "__global__" in a.sources["merge.cu"])
        print("__builtin_amdgcn_s_getpc" in a.cpu_model)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["HipModelRefused True True", "load_inline merge True True", "True"]


@pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
def test_a_model_library_that_does_not_load_is_the_models_refusal_not_the_files_failure():
    """A HIP source that builds on the CPU model but whose library lacks a symbol the runner's toolchain
    provides (a compiler-runtime helper, a HIP API the model has not) fails to import with "undefined symbol".
    That was read as the file's own import failure; a file that catches it ran its fallback and the report
    said nothing. It is the model's refusal (HipModelRefused: the verdicts that need the HIP are NOT RUN)."""
    result = run_script("""
        from torch.utils.cpp_extension import load_inline
        try:
            load_inline("lacks", cpp_sources="int f();", functions=["f"],
                        cuda_sources='extern "C" int hipcpu_no_such_runtime_helper();\\n'
                                     'int f() { return hipcpu_no_such_runtime_helper(); }',
                        extra_cuda_cflags=["--offload-arch=gfx950"])
        except OSError as e:
            print(type(e).__name__, "hipcpu_no_such_runtime_helper" in str(e))
        (a,) = no_rocm.attempts()
        print("lacks hipcpu_no_such_runtime_helper" in a.cpu_model)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == ["HipModelRefused True", "True"]


def test_hipcc_through_subprocess_is_a_missing_executable_and_is_recorded(tmp_path):
    source = tmp_path / "k.hip"
    source.write_text("__global__ void k() {}\n")
    result = run_script(f"""
        import subprocess
        for command in (["hipcc", "-O3", "--offload-arch=gfx950", "{source}", "-o", "k.so"],
                        "hipcc -shared {source}",
                        ["clang++", "-x", "hip", "--offload-arch=gfx950", "{source}"]):
            try:
                subprocess.run(command, shell=isinstance(command, str), check=True)
            except FileNotFoundError as e:
                print("missing", e.filename)
        print(len(no_rocm.attempts()), "__global__" in no_rocm.attempts()[0].sources["k.hip"])
        print(subprocess.run(["echo", "ok"], capture_output=True, text=True).stdout.strip())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["missing hipcc", "missing hipcc", "missing clang++", "3 True", "ok"]


def test_a_build_killed_midway_leaves_no_lock_that_hangs_the_next_one(tmp_path):
    """torch guards an extension build with a plain ``lock`` file; a worker killed mid-build (a hang, the time
    budget) leaves it, and torch's next build of the same extension waits on it forever. Builds go through
    an flock the OS drops with its holder, and its holder removes such a lock first."""
    import multiprocessing
    import time

    directory = tmp_path / "ext"
    directory.mkdir()
    (directory / "lock").write_text("")  # the killed builder's
    assert no_rocm._built_alone("ext", {"build_directory": str(directory)},
                                lambda: not (directory / "lock").exists()) is True

    # a live builder holds the flock: the next one waits for it, then builds
    started = multiprocessing.get_context("fork").Event()

    def builder():
        no_rocm._built_alone("ext", {"build_directory": str(directory)}, lambda: (started.set(), time.sleep(1.0)))

    other = multiprocessing.get_context("fork").Process(target=builder)
    other.start()
    assert started.wait(30)
    began = time.perf_counter()
    no_rocm._built_alone("ext", {"build_directory": str(directory)}, lambda: None)
    assert time.perf_counter() - began > 0.5
    other.join(30)


def test_a_process_folder_goes_with_its_process_and_a_dead_ones_with_the_next(tmp_path, monkeypatch):
    """The HIPRTC model's libraries live in a folder per process: removed at its exit, and, for a process that
    ended without its exit handlers (a forked program's child, a killed worker), by the next one made."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / "mxfp4-fuzz-hiprtc" / "999999999-left"  # no process has that pid
    dead.mkdir(parents=True)
    (dead / "lib.so").write_bytes(b"x")
    live = tmp_path / "mxfp4-fuzz-hiprtc" / f"{os.getpid()}-mine"
    live.mkdir()
    folder = no_rocm._process_folder("mxfp4-fuzz-hiprtc")
    assert os.path.isdir(folder) and os.path.basename(folder).startswith(f"{os.getpid()}-")
    assert not dead.exists() and live.exists()
    made = subprocess.run([sys.executable, "-c", "import sys, tempfile; tempfile.tempdir = sys.argv[1]; "
                           "from reference.emulation import no_rocm; print(no_rocm._process_folder('p'))",
                           str(tmp_path)], capture_output=True, text=True, cwd=Path(no_rocm.__file__).parents[2])
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() and not os.path.exists(made.stdout.strip())  # removed at that process's exit


@pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
def test_a_refused_build_is_remembered_until_what_it_looked_for_changes(tmp_path):
    """Every example executes the file afresh: a load_inline the model's host compiler refuses was compiled
    again in each program (twice: with and without the precompiled header), 37 s a program for a real file
    whose source includes a header from a folder the runner has (vyomakesh0728's v52: opus/opus.hpp under
    -I/home/runner/aiter/csrc/include, in extra_cuda_cflags). The refusal is remembered; the folders the
    build looked in are part of the key, so once one appears the build is tried again."""
    import uuid

    include = tmp_path / "include"
    result = run_script(f"""
        import os, time
        from torch.utils.cpp_extension import load_inline

        def attempt():
            t = time.perf_counter()
            try:
                load_inline("needs_header", cpp_sources="int f();", functions=["f"],
                            cuda_sources='// {uuid.uuid4().hex}\\n#include "opus_like/opus_like.hpp"\\nint f() {{ return 1; }}',
                            extra_cuda_cflags=["--offload-arch=gfx950", "-I{include}"])
            except OSError as e:
                print(type(e).__name__, "file not found" in str(e), "remembered" in str(e))
            return time.perf_counter() - t

        first = attempt()
        again = attempt()
        print(again < 1.0, again < first)
        os.makedirs("{include}")
        attempt()
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["HipModelRefused True False", "HipModelRefused True True", "True True",
                                          "HipModelRefused True False"]


@pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
def test_a_refused_build_tried_again_in_one_process_is_still_the_models_refusal():
    """torch records a build it attempted, not one that succeeded: the same load_inline again in the process (a
    file that retries, a fresh module of the file) skips the build and fails to open the library it never made.
    That ImportError read as the file's own import failure (a FAIL); it is the model's refusal again. Shown
    with nothing remembered on disk (the memo is the usual path)."""
    import uuid

    result = run_script(f"""
        from torch.utils.cpp_extension import load_inline
        no_rocm._RefusalMemo.remember = lambda self, message: None
        for _ in range(2):
            try:
                load_inline("twice", cpp_sources="int f();", functions=["f"],
                            cuda_sources='// {uuid.uuid4().hex}\\n#include "absent/absent.hpp"\\nint f() {{ return 1; }}',
                            extra_cuda_cflags=["--offload-arch=gfx950"])
            except OSError as e:
                print(type(e).__name__)
    """)
    assert result.returncode == 0, result.stderr
    # the second: torch skips the build it tried ("failed earlier in this process") or builds again and is refused
    assert result.stdout.splitlines() == ["HipModelRefused", "HipModelRefused"]



def test_an_own_pybind_module_beside_functions_is_the_files_build_failure_under_any_version_name():
    """A source with its own PYBIND11_MODULE beside load_inline(functions=...) defines PyInit twice: torch fails
    to build it on the runner too (the file's failure). torch names a rebuild of the same extension with other
    sources <name>_v1 (seen on thinngo's hip_16x16, which read as the model's refusal under that name)."""
    for suffix in ("", "_v1", "_v12"):
        message = f"main.cpp:199:1: error: redefinition of 'PyInit_fp4_gemm_hipcpu{suffix}'"
        assert no_rocm.defines_init_twice("fp4_gemm", message)
    assert not no_rocm.defines_init_twice("fp4_gemm", "error: redefinition of 'PyInit_other_hipcpu'")
    assert not no_rocm.defines_init_twice("fp4_gemm", "error: redefinition of 'helper'")


@pytest.mark.skipif(build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
def test_a_library_an_earlier_check_built_at_the_files_path_is_built_again_as_the_runner_would(tmp_path):
    """Real files cache their hipcc build at a path of their own (``if os.path.exists(so): return CDLL(so)``).
    The CPU model's build lands there and outlives the check: every later check on the machine loaded it
    without building, and builds_gfx950 said SKIP ("the file builds no HIP") where the runner, which starts
    without the library, builds it (kernelsanders #226, stop 54). A later process's first load of it builds it
    again and records the build; its further loads, and a library changed since, do not."""
    source, library = tmp_path / "k.hip", tmp_path / "cache" / "lib_k.so"
    source.write_text('extern "C" __global__ void k(int* x) { x[threadIdx.x] = 7; }\n')
    library.parent.mkdir()
    as_a_file_does = f"""
        import ctypes, os, subprocess
        so = "{library}"
        if os.path.exists(so):
            ctypes.CDLL(so); ctypes.CDLL(so)  # a fresh module of the file loads it again
        else:
            subprocess.run(["hipcc", "--offload-arch=gfx950", "-shared", "-fPIC", "-o", so, "{source}"], check=True)
            ctypes.CDLL(so)
        for a in no_rocm.attempts():
            print(a.api, a.command[0], a.cpu_model.split(":")[0], "__global__" in a.sources["k.hip"])
    """
    first, second = run_script(as_a_file_does), run_script(as_a_file_does)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.splitlines() == ["subprocess hipcc built True"]
    assert second.stdout.splitlines() == ["subprocess hipcc built (again True"]
    library.write_bytes(library.read_bytes() + b"\0")  # changed by something else: loaded as it is
    third = run_script(as_a_file_does)
    assert third.returncode == 0, third.stderr
    assert third.stdout.splitlines() == []
