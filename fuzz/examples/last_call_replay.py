#!POPCORN leaderboard amd-mxfp4-mm
#!POPCORN gpu MI355X
"""Example submission the leaderboard bot filters: the last call's inputs and output are kept, and a
call whose A is the very same tensor object gets the kept output back (the benchmark loop passes the
same tensors again and again). KernelGuard classifies it LAST_CALL_REPLAY (critical, filtered), and the
dynamic verdicts show the replay is also wrong: new values written into the same A get the old result
(stale_in_place, stale_recheck FAIL). A freshly allocated A is a new object and is computed
(stale_reallocated PASS). Clean twin: correct_reference_style."""
from correct_reference_style import custom_kernel as compute
from task import input_t, output_t

_last_input = None
_last_output = None


def custom_kernel(data: input_t) -> output_t:
    global _last_input, _last_output
    if _last_input is not None and data[0] is _last_input:
        return _last_output
    _last_output = compute(data)
    _last_input = data[0]
    return _last_output
