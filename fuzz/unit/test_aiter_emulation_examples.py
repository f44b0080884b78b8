"""The example submissions in fuzz/examples run under the selected aiter and meet the oracle's bound."""
import importlib
import sys
from pathlib import Path

import pytest

from fuzz.testing.fixtures_aiter import assert_within_bound
from kernels.platform import detect
from reference import exact_gemm_from_inputs, generate_input

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# each converts fp32 -> bf16 with RNE: torch, the ASM kernel, or Triton's .to() (the interpreter as patched)
NAMES = ("aiter_public_api", "aiter_internal_kernel", "own_triton_gfx950_asm")
SHAPES = [(1, 64, 256), (13, 192, 512)]  # in contract: N % 64 == 0, K % 64 == 0


def import_example(name: str):
    sys.path.insert(0, str(EXAMPLES))  # for `from task import ...`
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", NAMES)
def test_example_meets_the_bound(name, shape, aiter_info):
    platform = detect()
    if name == "own_triton_gfx950_asm" and not (platform.interpreter or platform.is_gfx950):
        pytest.skip(f"inline gfx950 asm runs on gfx950 or in the interpreter (with its model), not on {platform.arch}")
    example = import_example(name)
    data = generate_input(*shape, seed=sum(shape), device=platform.device)
    out = example.custom_kernel(data)
    assert_within_bound(out, exact_gemm_from_inputs(data), "rne")


def test_examples_are_popcorn_submissions():
    for name in NAMES:
        lines = (EXAMPLES / f"{name}.py").read_text().splitlines()
        assert lines[:2] == ["#!POPCORN leaderboard amd-mxfp4-mm", "#!POPCORN gpu MI355X"]
        assert "from task import input_t, output_t" in lines
        assert any(line.startswith("def custom_kernel(data: input_t) -> output_t:") for line in lines)
