"""The runner's aiter checkout (/home/runner/aiter, which HIP files include as
``-I/home/runner/aiter/csrc/include``) stood in by a local checkout: named by ``--aiter source=PATH`` or
MXFP4_FUZZ_RUNNER_AITER, read by the gfx950 build and the CPU model alike; without one, the report says what
the runner has there and how to supply it. Builds are cached by what their include folders hold, so a
folder that appears (or a header edited) is built again, never answered from an old result."""
from __future__ import annotations

import ctypes
import os

import pytest

from fuzz.codegen import hip_gfx950
from fuzz.submission import hip_builds
from fuzz.submission.report_text import build_lines
from reference.emulation import aiter_modes, include_folders, runner_paths
from reference.emulation.hip_cpu import build as hip_cpu_build

pytestmark = pytest.mark.skipif(os.path.exists(runner_paths.RUNNER_AITER),
                                reason="this machine has the runner's /home/runner/aiter itself: nothing is mapped")

HEADER = "#pragma once\n__device__ inline float twice(float x) { return 2.0f * x; }\n"
SOURCE = ('#include <hip/hip_runtime.h>\n#include "mini/twice.hpp"\n'
          "__global__ void k(float* y, const float* x) { y[threadIdx.x] = twice(x[threadIdx.x]); }\n")


@pytest.fixture
def checkout(tmp_path):
    """A stand-in aiter checkout holding one header under csrc/include."""
    (tmp_path / "aiter" / "csrc" / "include" / "mini").mkdir(parents=True)
    (tmp_path / "aiter" / "csrc" / "include" / "mini" / "twice.hpp").write_text(HEADER)
    return tmp_path / "aiter"


def test_paths_under_the_runners_aiter_map_to_the_stand_in(monkeypatch, checkout):
    monkeypatch.delenv(runner_paths.ENV, raising=False)
    flags = ["-O3", "-I/home/runner/aiter/csrc/include", "-isystem", "/home/runner/aiter/x", "-I/elsewhere"]
    assert runner_paths.mapped_flags(flags) == flags  # no stand-in: unchanged
    monkeypatch.setenv(runner_paths.ENV, str(checkout))
    assert runner_paths.mapped_flags(flags) == ["-O3", f"-I{checkout}/csrc/include", "-isystem", f"{checkout}/x",
                                                "-I/elsewhere"]
    assert runner_paths.mapped("/home/runner/aiterx/y") == "/home/runner/aiterx/y"  # another folder


def test_source_equals_path_names_the_stand_in_for_every_process(monkeypatch, checkout):
    monkeypatch.delenv(runner_paths.ENV, raising=False)
    aiter_modes.name_runner_aiter("emulated")
    assert runner_paths.ENV not in os.environ
    aiter_modes.name_runner_aiter(aiter_modes.parse_mode(f"source={checkout}"))
    assert os.environ[runner_paths.ENV] == str(checkout)
    aiter_modes.name_runner_aiter("source=/somewhere/else")  # the user's own setting wins
    assert os.environ[runner_paths.ENV] == str(checkout)


def test_an_absent_runner_folder_says_what_the_runner_has_and_how_to_supply_it(monkeypatch, checkout):
    monkeypatch.delenv(runner_paths.ENV, raising=False)
    reason = runner_paths.absent_reason("/home/runner/aiter/csrc/include")
    assert "f3be04a12a0c" in reason and "--aiter source=PATH" in reason and runner_paths.ENV in reason
    assert runner_paths.absent_reason("/opt/elsewhere") is None
    monkeypatch.setenv(runner_paths.ENV, str(checkout))
    assert runner_paths.absent_reason("/home/runner/aiter/csrc/include") is None  # the stand-in has it
    assert "has no csrc/nothing" in runner_paths.absent_reason("/home/runner/aiter/csrc/nothing")


def test_a_folder_fingerprint_follows_its_files(tmp_path):
    (tmp_path / "h.hpp").write_text("a")
    first = include_folders.fingerprint([str(tmp_path)])
    assert include_folders.fingerprint([str(tmp_path)]) == first
    (tmp_path / "h.hpp").write_text("ab")
    assert include_folders.fingerprint([str(tmp_path)]) != first
    assert include_folders.fingerprint([str(tmp_path / "none")]) != include_folders.fingerprint([str(tmp_path)])
    assert include_folders.named(["-I", "/a", "-I/b", "-isystem/c", "-idirafter", "/d", "-include", "x.h"]) == \
        ["/a", "/b", "/c", "/d"]


def _load_inline_attempt() -> dict:
    return {"api": "load_inline", "where": "sub.py:7", "name": "twice_ext", "command": [],
            "sources": {"twice_ext.cu": SOURCE},
            "options": {"extra_cuda_cflags": ["-O3", "-I/home/runner/aiter/csrc/include"], "no_implicit_headers": True}}


def test_the_gfx950_build_reads_the_runners_headers_from_the_stand_in(monkeypatch, checkout, tmp_path):
    toolchain, reason = hip_gfx950.find_toolchain()
    if toolchain is None:
        pytest.skip(f"no HIP compiler for gfx950 here: {reason}")
    monkeypatch.setenv("MXFP4_FUZZ_CACHE", str(tmp_path / "cache"))  # one cache for both builds: it must not answer
    monkeypatch.delenv(runner_paths.ENV, raising=False)
    (planned,) = hip_builds.plan(_load_inline_attempt(), str(tmp_path / "sub.py"))
    without = hip_gfx950.build(planned.source, planned.flags, planned.include_dirs, key_extra=planned.key_extra)
    limit = hip_builds.build_toolchain_limit(without)
    assert not without.ok and "mini/twice.hpp" in limit and "--aiter source=PATH" in limit, limit
    monkeypatch.setenv(runner_paths.ENV, str(checkout))
    (planned,) = hip_builds.plan(_load_inline_attempt(), str(tmp_path / "sub.py"))
    assert f"read from {checkout}" in planned.source.note
    built = hip_gfx950.build(planned.source, planned.flags, planned.include_dirs, key_extra=planned.key_extra)
    assert built.ok and not built.cached, built.first_error()
    (line, *_) = build_lines({**built.to_json(), "build": planned.label})
    assert line.endswith(f"builds (/home/runner/aiter read from {checkout} (commit unknown, not a git checkout, "
                         "the runner's is f3be04a12a0c))"), line


@pytest.mark.skipif(hip_cpu_build.find_clang() is None, reason="no clang++ here: the HIP CPU model needs it")
def test_the_cpu_model_reads_the_runners_headers_from_the_stand_in(monkeypatch, checkout, tmp_path):
    runner = ('extern "C" int run(float* y, const float* x) { k<<<1, 4>>>(y, x); return (int)hipGetLastError(); }\n')
    monkeypatch.delenv(runner_paths.ENV, raising=False)
    with pytest.raises(hip_cpu_build.BuildError, match="mini/twice.hpp"):
        hip_cpu_build.compile_shared([SOURCE + runner], tmp_path / "a.so", includes=["/home/runner/aiter/csrc/include"])
    monkeypatch.setenv(runner_paths.ENV, str(checkout))
    library = ctypes.CDLL(str(hip_cpu_build.compile_shared([SOURCE + runner], tmp_path / "b.so",
                                                           includes=["/home/runner/aiter/csrc/include"])))
    x, y = (ctypes.c_float * 4)(1, 2, 3, 4), (ctypes.c_float * 4)()
    assert library.run(y, x) == 0 and list(y) == [2, 4, 6, 8]
