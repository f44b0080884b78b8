"""The task's own ``reference`` module, as a submission imports it (``from reference import ref_kernel``).

On the runner that name is reference-kernels' problems/amd_202602/mxfp4-mm/reference.py beside the file
(``ref_kernel``, ``generate_input``, ``check_implementation``); files call its ``ref_kernel`` as a fallback
or to check themselves. Here ``reference`` is this project's package, which the worker imports before the
file, so a file asking for those names would get an ImportError the runner never raises. ``provide`` adds
the names our package lacks, standing in for the task's:

- ``ref_kernel(data)``: what the runner's reference computes (../shared/CONTRACT.md, "Official check"):
  A quantized by aiter's ``dynamic_mxfp4_quant``, its scales ``e8m0_shuffle``d, then
  ``gemm_a4w4(..., dtype=bf16, bpreshuffle=True)``, through whichever aiter the worker selected (the
  emulated one on the CPU tier), sliced to M rows;
- ``check_implementation(data, output)``: the official rule, (passed, message) as reference-kernels'
  ``make_match_reference`` returns it: |output - ref| <= 1e-2 + 1e-2 |ref| in fp32, NaN and infinities
  where the reference has them, the same shape.

``generate_input(m, n, k, seed)``: our oracle's draws (``reference.oracle.inputs``, the task's), made on the
tier's device as the task's are made on the GPU (ours defaults to the CPU: a file building inputs at import,
to capture graphs or warm its kernels, got CPU tensors on a GPU tier where the runner gives it GPU ones).
"""
from __future__ import annotations

RTOL = ATOL = 1e-2


def ref_kernel(data):
    import aiter
    from aiter.ops.triton.quant import dynamic_mxfp4_quant
    from aiter.utility import fp4_utils

    A, _, _, B_shuffle, B_scale_sh = data
    a_q, a_scale = dynamic_mxfp4_quant(A)
    a_scale_sh = fp4_utils.e8m0_shuffle(a_scale).view(aiter.dtypes.fp8_e8m0)
    out = aiter.gemm_a4w4(a_q.view(aiter.dtypes.fp4x2), B_shuffle, a_scale_sh, B_scale_sh, dtype=aiter.dtypes.bf16,
                          bpreshuffle=True)
    return out[:A.shape[0]]


def check_implementation(data, output):
    import torch

    expected = ref_kernel(data)
    if tuple(output.shape) != tuple(expected.shape):
        return False, f"SIZE MISMATCH: {tuple(output.shape)} vs {tuple(expected.shape)}"
    got, want = output.float(), expected.float()
    special = ~torch.isfinite(want) | ~torch.isfinite(got)
    same_special = (got == want) | (torch.isnan(got) & torch.isnan(want))
    close = (got - want).abs() <= ATOL + RTOL * want.abs()
    bad = torch.where(special, ~same_special, ~close)
    if bool(bad.any()):
        return False, f"mismatch found! custom implementation doesn't match reference: {int(bad.sum())} elements"
    return True, ""


NAMES = {"ref_kernel": ref_kernel, "check_implementation": check_implementation}


def on_device(generate_input, device: str):
    """``generate_input`` whose tensors are made on ``device`` unless the caller names one (our own callers do)."""
    def task_generate_input(m, n, k, seed, device=device, **options):
        return generate_input(m, n, k, seed, device=device, **options)

    task_generate_input.__doc__ = generate_input.__doc__
    task_generate_input.oracle = generate_input
    return task_generate_input


def provide(package, device: str = "cpu") -> None:
    """Add the task reference's names that ``package`` (our ``reference``) lacks, and make its
    ``generate_input`` default to ``device`` as the task's does to the GPU."""
    for name, value in NAMES.items():
        if not hasattr(package, name):
            setattr(package, name, value)
    current = package.generate_input
    package.generate_input = on_device(getattr(current, "oracle", current), device)
