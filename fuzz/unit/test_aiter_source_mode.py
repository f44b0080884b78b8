"""``--aiter source=PATH``: aiter's own wrappers and Triton kernels from a checkout over the emulation
(reference/emulation/aiter_source.py).

The tests that load a checkout take it from ``--aiter-source PATH`` or ``$MXFP4_FUZZ_AITER_SOURCE`` and
skip without one. Each selection runs in a fresh interpreter: the overlay replaces ``aiter`` modules
process-wide.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.testing.fresh_process import ROOT, run_fresh
from reference.emulation import aiter_source
from reference.emulation.select import parse_mode, use_aiter

EXAMPLES = ROOT / "fuzz" / "examples"
ENV_VAR = "MXFP4_FUZZ_AITER_SOURCE"


@pytest.fixture(scope="module")
def checkout(pytestconfig) -> Path:
    path = pytestconfig.getoption("--aiter-source") or os.environ.get(ENV_VAR)
    if not path:
        pytest.skip(f"needs an aiter checkout (e.g. at f3be04a12a0c, the runner's): --aiter-source PATH or ${ENV_VAR}")
    return Path(path).resolve()


def test_source_mode_is_parsed_with_an_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_mode("source=aiter") == f"source={tmp_path / 'aiter'}"
    assert parse_mode("emulated") == "emulated"
    for bad in ("source=", "sources=/x", "emu"):
        with pytest.raises(ValueError, match="source=PATH"):
            parse_mode(bad)


def test_a_folder_that_is_not_an_aiter_checkout_is_refused_by_name(tmp_path):
    with pytest.raises(aiter_source.NotAnAiterCheckout, match="not an aiter checkout: .*logger.py is missing"):
        use_aiter(f"source={tmp_path}")
    package = tmp_path / "aiter"
    (package / "ops" / "triton").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    with pytest.raises(aiter_source.NotAnAiterCheckout, match="looks like the aiter package itself"):
        use_aiter(f"source={package}")


def test_the_command_line_refuses_a_wrong_path_before_running_anything(tmp_path):
    done = subprocess.run([sys.executable, "-m", "fuzz.cli", "check", str(EXAMPLES / "aiter_public_api.py"),
                           "--aiter", f"source={tmp_path}", "--report", str(tmp_path / "r.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "not an aiter checkout" in done.stdout + done.stderr, done.stdout + done.stderr
    assert not (tmp_path / "r.json").exists()


def test_source_mode_serves_aiters_files_and_keeps_the_emulated_rest(checkout):
    done = run_fresh("from reference.emulation.select import use_aiter", f"""
        info = use_aiter("source={checkout}")
        print(info.describe())
        import aiter, aiter.ops.triton.gemm_a16wfp4 as flat
        from aiter.ops.triton.quant import dynamic_mxfp4_quant
        from aiter.ops.triton._triton_kernels.gemm.basic.gemm_a16wfp4 import _gemm_a16wfp4_preshuffle_kernel
        from aiter.ops.triton.utils.gemm_config_utils import get_gemm_config
        from aiter.utility import fp4_utils
        print(dynamic_mxfp4_quant.__code__.co_filename)
        print(flat.__file__)
        kernel = _gemm_a16wfp4_preshuffle_kernel
        while hasattr(kernel, "fn"):  # heuristics -> Triton's function object -> the Python function
            kernel = kernel.fn
        print(kernel.__code__.co_filename)
        print(aiter.gemm_a4w4.__code__.co_filename)
        print(fp4_utils.__file__)
        print(get_gemm_config("GEMM-A16WFP4_PRESHUFFLED", 8, 2112, 7168)[0]["NUM_KSPLIT"])
        print(use_aiter("emulated").describe())
        import aiter.ops.triton.quant as quant
        print(quant.dynamic_mxfp4_quant.__code__.co_filename)
    """)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"aiter source f3be04a12a0c from {checkout}, modules: ") and "quant.quant" in lines[0]
    for line in lines[1:4]:  # public wrapper, old flat alias, kernel: aiter's files
        assert line.startswith(str(checkout / "aiter")), line
    for line in lines[4:6]:  # the ASM GEMM and fp4_utils stay emulated
        assert "reference/emulation/aiter_emu" in line, line
    assert lines[6] == "14"  # aiter's own N=2112, K=7168 table, read from the copied JSON
    assert lines[7].startswith("aiter emulated") and "aiter_emu" in lines[8]


def verdicts(example: str, aiter: str, report: Path) -> tuple:
    """{verdict: status} of ``mxfp4-fuzz check`` on one example, and the report's aiter line."""
    command = [sys.executable, "-m", "fuzz.cli", "check", str(EXAMPLES / example), "--aiter", aiter,
               "--budget", "0", "--report", str(report)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    data = json.loads(report.read_text())
    return {v["verdict"]: v["status"] for v in data["verdicts"]}, data["aiter_detail"], done


@pytest.mark.slow
@pytest.mark.parametrize("example", ["aiter_public_api.py", "aiter_internal_kernel.py"])
def test_the_aiter_examples_get_the_same_verdicts_from_aiters_source_as_from_the_emulation(
        checkout, example, tmp_path):
    emulated, _, done = verdicts(example, "emulated", tmp_path / "emulated.json")
    assert emulated["loads"] == "PASS", done.stdout + done.stderr
    source, detail, done = verdicts(example, f"source={checkout}", tmp_path / "source.json")
    assert detail.startswith("aiter source "), detail
    assert source == emulated, done.stdout
