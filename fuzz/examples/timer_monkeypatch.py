#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission the leaderboard bot filters: it replaces ``torch.cuda.Event`` with a class whose
``elapsed_time`` reports a microsecond, so an event-timed benchmark would read a tiny time. The GEMM is
correct and our checks time nothing with events, so every dynamic verdict passes: KernelGuard's
TIMER_MONKEYPATCH (critical, filtered) is the only verdict. Clean twin: correct_reference_style."""
import torch

from correct_reference_style import custom_kernel as compute
from task import input_t, output_t


class _QuickEvent:
    """Records nothing, waits for nothing, and says every interval took a microsecond."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):  # record, synchronize, wait, query: all no-ops
        return lambda *args, **kwargs: True

    def elapsed_time(self, end_event):
        return 0.001


torch.cuda.Event = _QuickEvent


def custom_kernel(data: input_t) -> output_t:
    return compute(data)
