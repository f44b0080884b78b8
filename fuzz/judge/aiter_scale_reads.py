"""Why a wrong output may be aiter's own kernel reading B_scale_sh's padding, which the runner does too.

aiter's Triton GEMM kernels at the runner's commit load their scales without a K mask (f3be04a12a0c,
aiter/ops/triton/_triton_kernels/gemm/basic/: gemm_a16wfp4.py lines 140 and 320, gemm_afp4wfp4.py lines
145-146, 343-360, 572-590); only the data loads are masked when EVEN_K is False. So where K is not a
multiple of the kernel's BLOCK_SIZE_K, its last K block multiplies scale bytes past K/32: the padding
columns of the scale tensor, uninitialised memory on the runner (CONTRACT.md: B_scale_sh's padding), or
the next row's scales. A NaN E8M0 there (0xFF) makes NaN wherever it lands, on the runner as here. The
card says so, so the failure is read as what the file's call to aiter does, not as a bug of the emulation.
"""
from __future__ import annotations

import re

# A Triton launch the trace nests under an aiter call (indented), of a GEMM kernel, with EVEN_K=False
NESTED_GEMM = re.compile(r"^\s+(_gemm_\w+?)\[grid=[^\]]*\].*\bEVEN_K=False\b")


def padding_lines(trace_lines: list, scale_pad_fill: int) -> list:
    """Card lines for a failing output whose call ran aiter's own GEMM kernels with EVEN_K=False ([] if none)."""
    kernels = sorted({m.group(1) for line in trace_lines if (m := NESTED_GEMM.match(line))
                      and not m.group(1).endswith("reduce_kernel")})
    if not kernels or not scale_pad_fill:
        return []
    nan = " (a NaN E8M0: NaN wherever it is multiplied)" if scale_pad_fill == 0xFF else ""
    return [f"aiter's own {', '.join(kernels)} (at f3be04a12a0c) loads its scales without a K mask: with EVEN_K=False "
            f"(K % BLOCK_SIZE_K != 0) its last K block multiplies scale bytes past K/32, the padding of the scale "
            f"tensor, uninitialised memory on the runner (this case: 0x{scale_pad_fill:02X}{nan}); aiter's kernel "
            "does the same on the runner"]
