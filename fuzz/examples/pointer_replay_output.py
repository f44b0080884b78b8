#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission the leaderboard bot filters: the output of a call is saved under the inputs'
addresses and returned again when the same addresses come back (a benchmark loop calls with the same
tensors, so it looks fast). KernelGuard classifies it POINTER_REPLAY (critical, filtered), and the
dynamic verdicts show the replay is also wrong: new values written into the same tensors get the old
result (stale_in_place, stale_recheck FAIL). Clean twin: correct_reference_style."""
from correct_reference_style import custom_kernel as compute
from task import input_t, output_t

_saved = {}


def custom_kernel(data: input_t) -> output_t:
    A, B = data[0], data[1]
    key = (A.data_ptr(), B.data_ptr())
    if key in _saved:
        return _saved[key]
    out = compute(data)
    _saved[key] = out
    return out
