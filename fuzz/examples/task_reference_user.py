#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission, correct: the task's own reference module, as real files use it (a fallback, or a
self-check): ``from reference import ref_kernel, check_implementation, generate_input``. On the runner that
is reference.py beside the file; here it is our ``reference`` package, to which the worker adds the task's
names (reference/emulation/task_reference.py).
"""
from reference import check_implementation, generate_input, ref_kernel

from task import input_t, output_t

_CHECKED = []


def custom_kernel(data: input_t) -> output_t:
    if not _CHECKED:  # a self-check once, on a shape of the task's own generator
        probe = generate_input(8, 64, 256, seed=1)
        passed, message = check_implementation(probe, ref_kernel(probe))
        assert passed, message
        _CHECKED.append(True)
    return ref_kernel(data)
