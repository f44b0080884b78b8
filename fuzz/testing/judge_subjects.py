"""Pure-torch subjects and value helpers for the judge's tests (verdicts, attribution): the exact product
rounded once (correct), an fp32 product truncated to bf16 (a planted rounding bug), and the decoded
operand values they are built from."""
import torch

from reference import (
    dequantize_mxfp4,
    e8m0_unshuffle,
    quantize_mxfp4,
    round_to_bf16,
)


def b_values(data) -> torch.Tensor:
    _, _, B_q, _, B_scale_sh = data
    return dequantize_mxfp4(B_q, e8m0_unshuffle(B_scale_sh, B_q.shape[0], B_q.shape[1] // 16))


def a_values(A, scales_hook=None) -> torch.Tensor:
    """A dequantized after quantize_mxfp4; ``scales_hook`` may corrupt the scale bytes first."""
    packed, scales = quantize_mxfp4(A)
    if scales_hook is not None:
        scales = scales_hook(scales.clone())
    return dequantize_mxfp4(packed, scales)


def rne(v: torch.Tensor) -> torch.Tensor:
    return round_to_bf16(v, "rne").to(torch.bfloat16)


def truncate_to_bf16(x32: torch.Tensor) -> torch.Tensor:
    return (x32.view(torch.int32) & ~0xFFFF).view(torch.float32).to(torch.bfloat16)


def reference_subject(data):
    return rne(a_values(data[0]) @ b_values(data).T)


def fp32_truncating_subject(data):
    """What the Triton interpreter does: an fp32 product, truncated to bf16."""
    return truncate_to_bf16(a_values(data[0]).float() @ b_values(data).float().T)


class Subject:
    def __init__(self, fn, rounding="rne"):
        self.custom_kernel, self.rounding = fn, rounding
