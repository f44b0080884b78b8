#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission KernelGuard flags (LAZY_TENSOR, low confidence: not filtered by itself): the call
returns at once a ``torch.Tensor`` subclass that holds the inputs and computes the product only when the
result is first used, so a timer stopped at the return measures nothing. It keeps references to the
inputs, not copies: an input written after the call and before the result is read changes the result.
Our worker reads each output right after its call, so no dynamic verdict sees it on any tier; the report
shows the rule beside all-PASS dynamic verdicts. Clean twin: correct_reference_style."""
import torch

from correct_reference_style import custom_kernel as compute
from task import input_t, output_t


class DeferredProduct(torch.Tensor):
    @staticmethod
    def __new__(cls, data):
        A, B = data[0], data[1]
        shell = torch.Tensor._make_subclass(cls, torch.empty((A.shape[0], B.shape[0]), dtype=torch.bfloat16,
                                                             device=A.device))
        shell._pending = data
        return shell

    def _materialise(self):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            with torch._C.DisableTorchFunctionSubclass():
                self.copy_(compute(pending))
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for arg in args:
            if isinstance(arg, DeferredProduct) and getattr(arg, "_pending", None) is not None:
                arg._materialise()
        with torch._C.DisableTorchFunctionSubclass():
            result = func(*args, **(kwargs or {}))
        return result


def custom_kernel(data: input_t) -> output_t:
    return DeferredProduct(data)
