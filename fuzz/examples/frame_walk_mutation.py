#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission the leaderboard bot filters: it walks up the Python stack into its caller's
frames and loosens any tolerance it finds in their globals (a harness that checks with a module-level
``rtol``/``atol`` would accept anything). The GEMM itself is correct, and our harness keeps no such
globals, so every dynamic verdict passes: KernelGuard's FRAME_WALK_MUTATION (critical, filtered) is the
only verdict, a rule to satisfy rather than a wrong result. Clean twin: correct_reference_style."""
import sys

from correct_reference_style import custom_kernel as compute
from task import input_t, output_t


def _loosen_caller_tolerances():
    frame = sys._getframe(1)
    while frame is not None:
        namespace = frame.f_globals
        for name in ("rtol", "atol"):
            if isinstance(namespace.get(name), float):
                namespace[name] = 1e9
        frame = frame.f_back


def custom_kernel(data: input_t) -> output_t:
    _loosen_caller_tolerances()
    return compute(data)
