"""pytest support for the aiter choice (``--aiter auto|real|emulated``).

``aiter_info`` (session fixture): makes ``import aiter`` resolve as the option says and returns the
``AiterInfo`` (kind, version, path). ``emulated(module)`` imports a module of the emulation under the
top-level name ``aiter_emulated``, for tests of the emulation itself whichever aiter is selected.
``assert_within_bound`` is the oracle check those tests share.
"""
from __future__ import annotations

import importlib

import pytest
import torch

from reference.emulation.select import AiterInfo, load_emulation, use_aiter
from reference.oracle.gemm import ExactProduct, acceptable_range, accumulation_bound
from reference.oracle.layouts import e8m0_unshuffle

EMULATION_NAME = "aiter_emulated"


def pytest_addoption(parser):
    parser.getgroup("mxfp4-fuzz", "MXFP4 GEMM fuzzing").addoption(
        "--aiter-source", metavar="PATH", default=None,
        help="an aiter checkout (e.g. at f3be04a12a0c, the runner's): -m conformance also runs its Triton kernels in this "
             "tier's Triton and compares the emulated kernels with them bit for bit (fuzz/conformance)")


@pytest.fixture(scope="session")
def aiter_info(pytestconfig) -> AiterInfo:
    return use_aiter(pytestconfig.getoption("--aiter"))


def emulated(module: str = ""):
    """The emulation's ``aiter.<module>`` (or the package itself), independent of the selected aiter."""
    package = load_emulation(EMULATION_NAME)
    return importlib.import_module(f"{EMULATION_NAME}.{module}") if module else package


def assert_within_bound(out: torch.Tensor, exact: ExactProduct, rounding: str, splits: int = 1) -> None:
    """Every element of ``out`` lies where a correct fp32-accumulating kernel's result may (reference.oracle.gemm)."""
    assert out.shape == exact.value.shape, f"shape {tuple(out.shape)} != {tuple(exact.value.shape)}"
    lo, hi = acceptable_range(exact, accumulation_bound(exact, splits), rounding)
    got = out.to(device=lo.device, dtype=torch.float64)
    bad = ~((got >= lo) & (got <= hi)) & ~exact.overflow_risk
    if bad.any():
        i, j = (int(v) for v in bad.nonzero()[0])
        raise AssertionError(f"{int(bad.sum())} of {bad.numel()} outputs outside the bound ({rounding}); first at "
                             f"[{i}, {j}]: {got[i, j].item()!r} not in [{lo[i, j].item()!r}, {hi[i, j].item()!r}], "
                             f"exact {exact.value[i, j].item()!r}")


def preshuffled_views(data):
    """B_shuffle as (N//16, K*8) bytes and B_scale_sh as (N_pad//32, 32*cols) bytes: the a16wfp4 views."""
    _, _, _, b_shuffle, b_scale_sh = data
    n, half_k = b_shuffle.shape
    return (b_shuffle.view(torch.uint8).reshape(n // 16, half_k * 16),
            b_scale_sh.view(torch.uint8).reshape(b_scale_sh.shape[0] // 32, -1))


def unshuffled_b(data):
    """B's packed codes and its scales unshuffled to [N, K/32] (uint8, contiguous)."""
    _, _, b_q, _, b_scale_sh = data
    n, half_k = b_q.shape
    return b_q.view(torch.uint8), e8m0_unshuffle(b_scale_sh, n, half_k // 16).view(torch.uint8).contiguous()
